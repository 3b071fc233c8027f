// Callbacks: kerascpp's built-in callbacks, and PyCallback, which lets fit() call a callback written
// in Python (a keras.callbacks.Callback subclass). fit runs with the GIL released; PyCallback takes it
// for each hook the Python class overrides, passes the logs as a dict and writes the numbers the
// callback set back into fit's logs. Hooks the class leaves alone cost nothing.
#include <nanobind/stl/function.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "py_layer.h"  // PyRef

namespace kcpy {

using callbacks::Callback;
using callbacks::CallbackPtr;

nb::object float32_array(const std::vector<double>& values) {
  std::vector<float> f(values.begin(), values.end());
  return to_numpy(Tensor::from_vector({static_cast<int64_t>(f.size())}, f));
}

nb::dict logs_to_py(const Logs& logs) {
  nb::dict d;
  for (const auto& [k, v] : logs.items()) {
    if (const std::vector<double>* a = logs.array(k)) {
      d[k.c_str()] = float32_array(*a);
    } else {
      d[k.c_str()] = v;
    }
  }
  return d;
}

void logs_from_py(nb::handle d, Logs& logs) {
  if (d.is_none()) return;
  for (auto [k, v] : nb::borrow<nb::dict>(d)) {
    if (!nb::isinstance<nb::str>(k) || nb::isinstance<nb::str>(v) || v.is_none()) continue;
    if (nb::hasattr(v, "ndim") && nb::cast<int>(v.attr("ndim")) > 0) {  // an array log (or one set in Python)
      std::vector<double> values;
      try {
        nb::object flat = nb::module_::import_("numpy").attr("asarray")(v, "float64").attr("ravel")();
        for (nb::handle x : flat) values.push_back(nb::cast<double>(x));
      } catch (const nb::python_error&) {
        continue;  // not numbers: Keras logs may hold anything, fit's logs hold numbers
      }
      std::string key = nb::cast<std::string>(k);
      if (const std::vector<double>* old = logs.array(key); !old || *old != values) logs.set_array(key, values);
      continue;
    }
    double x = PyFloat_AsDouble(v.ptr());  // floats, ints, numpy scalars and 0-d arrays
    if (x == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();  // not a number: Keras logs may hold anything, fit's logs hold numbers
      continue;
    }
    std::string key = nb::cast<std::string>(k);
    if (auto old = logs.get(key); !old || *old != x) logs.set(key, x);
  }
}

namespace {

// Keras's callback.params: {"verbose", "epochs", "steps"}.
nb::dict params_to_py(const callbacks::Params& params) {
  nb::dict p;
  p["verbose"] = params.verbose;
  p["epochs"] = params.epochs;
  if (params.steps >= 0) {
    p["steps"] = params.steps;
  } else {
    p["steps"] = nb::none();  // unknown until the data's first pass ends (a generator), as Keras's None
  }
  return p;
}

enum Hook : unsigned {
  kTrainBegin, kTrainEnd, kEpochBegin, kEpochEnd, kTrainBatchBegin, kTrainBatchEnd,
  kTestBegin, kTestEnd, kTestBatchBegin, kTestBatchEnd, kHookCount
};
const char* const kHookNames[kHookCount] = {
    "on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_train_batch_begin",
    "on_train_batch_end", "on_test_begin", "on_test_end", "on_test_batch_begin", "on_test_batch_end"};

class PyCallback : public Callback {
 public:
  // obj: the Python callback; hooks: the hook names its class overrides; native: the kerascpp
  // callback a built-in Python callback wraps (its hooks run where Python's are not overridden).
  PyCallback(nb::handle obj, const std::vector<std::string>& hooks, CallbackPtr native)
      : obj_(obj), native_(std::move(native)) {
    for (const std::string& h : hooks) {
      unsigned i = 0;
      while (i < kHookCount && h != kHookNames[i]) ++i;
      KCPP_CHECK(i < kHookCount, ValueError, "Unknown callback hook '", h, "'");
      mask_ |= 1u << i;
    }
  }

  void on_train_begin(Logs& logs) override { send_params(), run(kTrainBegin, -1, logs); }
  void on_train_end(Logs& logs) override { run(kTrainEnd, -1, logs); }
  void on_epoch_begin(int epoch, Logs& logs) override { run(kEpochBegin, epoch, logs); }
  void on_epoch_end(int epoch, Logs& logs) override { run(kEpochEnd, epoch, logs); }
  void on_train_batch_begin(int64_t batch, Logs& logs) override { run(kTrainBatchBegin, batch, logs); }
  void on_train_batch_end(int64_t batch, Logs& logs) override { run(kTrainBatchEnd, batch, logs); }
  void on_test_begin(Logs& logs) override { send_params(), run(kTestBegin, -1, logs); }
  void on_test_end(Logs& logs) override { run(kTestEnd, -1, logs); }
  void on_test_batch_begin(int64_t batch, Logs& logs) override { run(kTestBatchBegin, batch, logs); }
  void on_test_batch_end(int64_t batch, Logs& logs) override { run(kTestBatchEnd, batch, logs); }

  // A Python subclass of ModelCheckpoint, CSVLogger... writes where the callback it wraps writes.
  bool chief_only() const override { return native_ && native_->chief_only(); }

 private:
  void send_params() {
    nb::gil_scoped_acquire gil;
    nb::dict p = params_to_py(params());
    try {
      if (nb::hasattr(obj_.get(), "set_params"))
        obj_.get().attr("set_params")(p);
      else
        nb::setattr(obj_.get(), "params", p);
    } catch (const nb::python_error& e) {
      rethrow_python(e, "In set_params of callback " + type_name());
    }
  }

  void run(Hook h, int64_t index, Logs& logs) {
    if (native_) {
      native_->set_model(model());
      native_->set_params(params());
    }
    if (!(mask_ & (1u << h))) {
      if (native_) run_native(*native_, h, index, logs);
      return;
    }
    nb::gil_scoped_acquire gil;
    try {
      nb::dict d = logs_to_py(logs);
      nb::object fn = obj_.get().attr(kHookNames[h]);
      if (index >= 0)
        fn(index, d);
      else
        fn(d);
      logs_from_py(d, logs);
    } catch (const nb::python_error& e) {
      rethrow_python(e, std::string("In ") + kHookNames[h] + " of callback " + type_name());
    }
  }

  std::string type_name() const { return nb::cast<std::string>(nb::type_name(obj_.get().type())); }

  PyRef obj_;
  CallbackPtr native_;
  unsigned mask_ = 0;

 public:
  static void run_native(Callback& c, unsigned h, int64_t i, Logs& logs) {
    switch (h) {
      case kTrainBegin: return c.on_train_begin(logs);
      case kTrainEnd: return c.on_train_end(logs);
      case kEpochBegin: return c.on_epoch_begin(static_cast<int>(i), logs);
      case kEpochEnd: return c.on_epoch_end(static_cast<int>(i), logs);
      case kTrainBatchBegin: return c.on_train_batch_begin(i, logs);
      case kTrainBatchEnd: return c.on_train_batch_end(i, logs);
      case kTestBegin: return c.on_test_begin(logs);
      case kTestEnd: return c.on_test_end(logs);
      case kTestBatchBegin: return c.on_test_batch_begin(i, logs);
      case kTestBatchEnd: return c.on_test_batch_end(i, logs);
      default: KCPP_THROW(InternalError, "bad callback hook ", h);
    }
  }
};

// A hook of a kerascpp callback called from Python (a Python subclass of a built-in calling
// super().on_epoch_end(epoch, logs)): the logs dict is read, and what the hook set written back.
template <class C>
void def_hooks(C& cls) {
  for (unsigned h = 0; h < kHookCount; ++h) {
    bool indexed = h == kEpochBegin || h == kEpochEnd || h == kTrainBatchBegin || h == kTrainBatchEnd ||
                   h == kTestBatchBegin || h == kTestBatchEnd;
    if (indexed)
      cls.def(kHookNames[h], [h](Callback& c, int64_t i, nb::handle d) {
        Logs logs;
        logs_from_py(d, logs);
        PyCallback::run_native(c, h, i, logs);
        if (!d.is_none()) d.attr("update")(logs_to_py(logs));
      }, nb::arg("index"), nb::arg("logs").none() = nb::none());
    else
      cls.def(kHookNames[h], [h](Callback& c, nb::handle d) {
        Logs logs;
        logs_from_py(d, logs);
        PyCallback::run_native(c, h, -1, logs);
        if (!d.is_none()) d.attr("update")(logs_to_py(logs));
      }, nb::arg("logs").none() = nb::none());
  }
}

Json kwargs_of(const std::string& text) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    KCPP_THROW(ValueError, "Could not read the callback's arguments: ", e.what());
  }
}

// A Python schedule(epoch, lr) -> lr run with the GIL from fit's thread.
std::function<double(int, double)> python_schedule(nb::handle fn) {
  auto ref = std::make_shared<PyRef>(fn);
  return [ref](int epoch, double lr) {
    nb::gil_scoped_acquire gil;
    try {
      return nb::cast<double>(ref->get()(epoch, lr));
    } catch (const nb::python_error& e) {
      rethrow_python(e, "In the schedule of LearningRateScheduler");
    }
  };
}

}  // namespace

void bind_callbacks(nb::module_& m) {
  using namespace callbacks;
  auto base = nb::class_<Callback>(m, "Callback");
  def_hooks(base);
  base.def_prop_ro("params", [](const Callback& c) { return params_to_py(c.params()); });

  nb::class_<PyCallback, Callback>(m, "PyCallback")
      .def(nb::init<nb::handle, const std::vector<std::string>&, CallbackPtr>(), nb::arg("callback"),
           nb::arg("hooks"), nb::arg("native").none());

  nb::class_<History, Callback>(m, "History")
      .def(nb::init<>())
      .def_ro("epoch", &History::epoch)
      .def_prop_ro("history", [](const History& h) {
        nb::dict d;
        for (const auto& [k, v] : h.history) d[k.c_str()] = nb::cast(v);
        for (const auto& [k, epochs] : h.array_history) {
          nb::list per_epoch;
          for (const auto& a : epochs) per_epoch.append(float32_array(a));
          d[k.c_str()] = per_epoch;
        }
        return d;
      });

  nb::class_<ModelCheckpoint, Callback>(m, "ModelCheckpoint")
      .def("__init__", [](ModelCheckpoint* self, const std::string& filepath, const std::string& kwargs) {
        new (self) ModelCheckpoint(filepath, kwargs_of(kwargs));
      }, nb::arg("filepath"), nb::arg("kwargs"))
      .def_prop_ro("best", &ModelCheckpoint::best);
  nb::class_<EarlyStopping, Callback>(m, "EarlyStopping")
      .def("__init__", [](EarlyStopping* self, const std::string& kwargs) { new (self) EarlyStopping(kwargs_of(kwargs)); },
           nb::arg("kwargs"))
      .def_prop_ro("stopped_epoch", &EarlyStopping::stopped_epoch);
  nb::class_<ReduceLROnPlateau, Callback>(m, "ReduceLROnPlateau")
      .def("__init__", [](ReduceLROnPlateau* self, const std::string& kwargs) {
        new (self) ReduceLROnPlateau(kwargs_of(kwargs));
      }, nb::arg("kwargs"));
  nb::class_<LearningRateScheduler, Callback>(m, "LearningRateScheduler")
      .def("__init__", [](LearningRateScheduler* self, nb::handle schedule, int verbose) {
        new (self) LearningRateScheduler(python_schedule(schedule), verbose);
      }, nb::arg("schedule"), nb::arg("verbose") = 0);
  nb::class_<CSVLogger, Callback>(m, "CSVLogger")
      .def(nb::init<std::string, std::string, bool>(), nb::arg("filename"), nb::arg("separator") = ",",
           nb::arg("append") = false);
  nb::class_<BackupAndRestore, Callback>(m, "BackupAndRestore")
      .def("__init__", [](BackupAndRestore* self, const std::string& backup_dir, const std::string& kwargs) {
        new (self) BackupAndRestore(backup_dir, kwargs_of(kwargs));
      }, nb::arg("backup_dir"), nb::arg("kwargs"));
  nb::class_<TensorBoard, Callback>(m, "TensorBoard")
      .def("__init__", [](TensorBoard* self, const std::string& kwargs) { new (self) TensorBoard(kwargs_of(kwargs)); },
           nb::arg("kwargs"));
  nb::class_<TerminateOnNaN, Callback>(m, "TerminateOnNaN").def(nb::init<>());
  nb::class_<ProgbarLogger, Callback>(m, "ProgbarLogger").def("__init__", [](ProgbarLogger* self) {
    new (self) ProgbarLogger(nullptr);  // std::cout, where fit's own bar writes
  });
  nb::class_<WeightHistory, Callback>(m, "WeightHistory")
      .def(nb::init<std::string, int>(), nb::arg("filename"), nb::arg("every") = 1);
}

}  // namespace kcpy
