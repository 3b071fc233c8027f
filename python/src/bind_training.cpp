// Training from Python: optimizers and learning-rate schedules, losses, metrics, and the Model's
// compile / fit / evaluate / train_on_batch / test_on_batch. Configs cross as JSON text (the Python
// side holds dicts); fit and evaluate run with the GIL released (Python callbacks and custom layers
// take it back when they run).
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "common.h"
#include "py_layer.h"  // PyRef

namespace kcpy {

namespace {

using callbacks::CallbackPtr;
using losses::Loss;
using losses::LossPtr;
using metrics::Metric;
using metrics::MetricPtr;
using optimizers::LearningRateSchedule;
using optimizers::Optimizer;
using optimizers::OptimizerPtr;

Json parse(const std::string& text, const char* what) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    KCPP_THROW(ValueError, "Could not read the ", what, " config: ", e.what());
  }
}

Tensor optional_tensor(nb::handle h) { return h.is_none() ? Tensor() : from_object(h); }

// A Python callable tracing a loss or metric function again for another y_true shape (a tuple with
// None for the batch), as the engine's Retrace: it takes the GIL, and a Python error surfaces named.
losses::Retrace retrace_of(nb::handle fn, const char* what) {
  if (fn.is_none()) return {};
  auto ref = std::make_shared<PyRef>(fn);
  return [ref, what = std::string(what)](const Shape& y_true_shape) -> std::shared_ptr<const Model> {
    nb::gil_scoped_acquire gil;
    try {
      nb::object model = ref->get()(shape_to_py(y_true_shape));
      return std::make_shared<const Model>(nb::cast<const Model&>(model));
    } catch (const nb::python_error& e) {
      rethrow_python(e, "Tracing the " + what + " function again for y_true of shape " + shape_str(y_true_shape));
    }
  };
}

// A 0-d result as a numpy scalar (Keras returns a scalar tensor), anything else as an array.
nb::object result_of(const Tensor& t) {
  nb::object a = to_numpy(t);
  return t.shape().empty() ? a[nb::tuple()] : a;
}

// A Python data source (kerascpp._data: a PyDataset, a generator, a tf.data.Dataset) as the engine's
// Dataset: each call takes the GIL; the engine reads it on its input thread while it computes without.
class PySource final : public Dataset {
 public:
  explicit PySource(nb::handle source) : source_(nb::borrow(source)), num_(nb::cast<int64_t>(source.attr("num_batches"))) {}
  int64_t num_batches() const override { return num_; }
  void begin_pass() override {
    nb::gil_scoped_acquire gil;
    source_.attr("begin_pass")();
  }
  std::optional<Batch> next() override {
    nb::gil_scoped_acquire gil;
    nb::object b = source_.attr("next")();
    if (b.is_none()) return std::nullopt;
    Batch out;
    out.x = tensors_from(b[0]);
    if (!b[1].is_none()) out.y = tensors_from(b[1]);
    if (!b[2].is_none()) out.sample_weight = from_object(b[2]);
    return out;
  }
  void on_epoch_begin() override {
    nb::gil_scoped_acquire gil;
    source_.attr("on_epoch_begin")();
  }
  void on_epoch_end() override {
    nb::gil_scoped_acquire gil;
    source_.attr("on_epoch_end")();
  }

 private:
  nb::object source_;
  int64_t num_;
};

// A user's keras.optimizers.schedules.LearningRateSchedule subclass (a Python object): the optimizer
// calls it once per step from the training thread, taking the GIL.
class PySchedule final : public LearningRateSchedule {
 public:
  explicit PySchedule(nb::handle schedule)
      : schedule_(schedule),
        class_name_(nb::cast<std::string>(nb::getattr(schedule.type(), "__name__"))),
        module_(nb::cast<std::string>(nb::getattr(schedule.type(), "__module__"))) {}
  std::string class_name() const override { return class_name_; }
  double operator()(int64_t step) const override {
    nb::gil_scoped_acquire gil;
    try {
      return nb::cast<double>(nb::float_(schedule_.get()(step)));
    } catch (const nb::python_error& e) {
      rethrow_python(e, "In the learning-rate schedule " + class_name_ + " at step " + std::to_string(step));
    }
  }
  Json get_config() const override {
    nb::gil_scoped_acquire gil;
    try {
      return Json::parse(nb::cast<std::string>(nb::module_::import_("kerascpp._json").attr("dumps")(
          schedule_.get().attr("get_config")())));
    } catch (const nb::python_error& e) {
      rethrow_python(e, "In get_config() of the learning-rate schedule " + class_name_);
    }
  }
  Json serialize() const override {  // serialize_keras_object of a class Keras does not register
    return Json{{"module", module_}, {"class_name", class_name_}, {"config", get_config()},
                {"registered_name", class_name_}};
  }

 private:
  PyRef schedule_;
  std::string class_name_, module_;
};

// A family's one list (optimizer_list.inc, ...) as [(class_name, [arguments], [identifiers])]: the
// Python package makes its classes from it.
nb::list class_list(const std::vector<ClassInfo>& classes) {
  nb::list out;
  for (const ClassInfo& c : classes) out.append(nb::make_tuple(c.class_name, c.arguments, c.identifiers));
  return out;
}

void bind_optimizers(nb::module_& m) {
  nb::class_<LearningRateSchedule>(m, "LearningRateSchedule")
      .def_prop_ro("class_name", &LearningRateSchedule::class_name)
      .def("__call__", [](const LearningRateSchedule& s, int64_t step) { return s(step); }, nb::arg("step"))
      .def("get_config_json", [](const LearningRateSchedule& s) { return s.get_config().dump(); });
  m.def("schedule_from_config", [](const std::string& config) {
    return optimizers::schedule_from_config(parse(config, "learning rate schedule"));
  });

  nb::class_<Optimizer>(m, "Optimizer")
      .def_prop_ro("class_name", &Optimizer::class_name)
      .def_prop_ro("name", &Optimizer::name)
      .def_prop_ro("iterations", &Optimizer::iterations)
      .def_prop_rw("learning_rate", &Optimizer::learning_rate, &Optimizer::set_learning_rate)
      .def_prop_ro("has_schedule", &Optimizer::has_schedule)
      .def_prop_ro("built", &Optimizer::built)
      .def("variables", &Optimizer::variables)
      .def("build", &Optimizer::build, nb::arg("var_list"))
      .def("apply_gradients", [](Optimizer& self, nb::handle grads, const std::vector<VariablePtr>& vars) {
        std::vector<Tensor> g;
        for (nb::handle v : grads) g.push_back(optional_tensor(v));  // None: a variable the loss ignores
        self.apply_gradients(g, vars);
      }, nb::arg("grads"), nb::arg("vars"))
      .def("get_config_json", [](const Optimizer& self) { return self.get_config().dump(); })
      .def("set_python_schedule", [](Optimizer& self, nb::handle schedule) {
        self.set_schedule(std::make_shared<PySchedule>(schedule));
      }, nb::arg("schedule"));
  m.def("schedule_from_python", [](nb::handle schedule) -> optimizers::SchedulePtr { return std::make_shared<PySchedule>(schedule); },
        nb::arg("schedule"));
  m.def("optimizer_get", [](const std::string& identifier) {
    return optimizers::get(parse(identifier, "optimizer"));
  });
  m.def("optimizer_classes", [] { return class_list(optimizers::optimizer_classes()); });
  m.def("schedule_classes", [] { return class_list(optimizers::schedule_classes()); });
}

void bind_losses(nb::module_& m) {
  nb::class_<Loss>(m, "Loss")
      .def_prop_ro("class_name", &Loss::class_name)
      .def_prop_ro("name", &Loss::name)
      .def("call", [](const Loss& self, nb::handle y_true, nb::handle y_pred) {
        return to_numpy(self.call(from_object(y_true), from_object(y_pred)));
      }, nb::arg("y_true"), nb::arg("y_pred"))
      .def("__call__", [](const Loss& self, nb::handle y_true, nb::handle y_pred, nb::handle sample_weight) {
        return result_of(self(from_object(y_true), from_object(y_pred), optional_tensor(sample_weight)));
      }, nb::arg("y_true"), nb::arg("y_pred").none(), nb::arg("sample_weight").none() = nb::none())
      .def("get_config_json", [](const Loss& self) { return self.get_config().dump(); });
  m.def("loss_get", [](const std::string& identifier) { return losses::get(parse(identifier, "loss")); });
  m.def("loss_classes", [] { return class_list(losses::loss_classes()); });
  // A Python loss function traced into `function` (a model of y_true, y_pred); see losses::from_function.
  m.def("loss_from_function", [](const Model& function, const std::string& config, const std::string& serialized,
                                  nb::handle retrace) {
    return losses::from_function(std::make_shared<const Model>(function), parse(config, "loss"),
                                 parse(serialized, "loss"), retrace_of(retrace, "loss"));
  }, nb::arg("function"), nb::arg("config"), nb::arg("serialized"), nb::arg("retrace").none() = nb::none());
}

// A keras.metrics.Metric subclass written in Python (its own update_state and result, with keras.ops
// and add_variable): the engine calls it with the GIL on numpy arrays once per batch, as Keras runs a
// metric outside the gradient. Its errors surface with the metric's class named.
class PyMetric final : public Metric {
 public:
  PyMetric(nb::handle obj, const std::string& name, const std::string& serialized)
      : Metric(Json{{"name", name}}, name), obj_(obj), serialized_(parse(serialized, "metric")) {
    config_ = serialized_.value("config", Json::object());
  }
  std::string class_name() const override { return serialized_.value("class_name", "Metric"); }
  void update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) override {
    nb::gil_scoped_acquire gil;
    cached_.reset();
    call("update_state", [&] {
      obj_.get().attr("update_state")(to_numpy(y_true, true), to_numpy(y_pred, true),
                                      sample_weight.defined() ? to_numpy(sample_weight, true) : nb::none());
    });
  }
  // fit asks array_result() and then for the result: one Python result() call serves both.
  bool array_result() const override {
    nb::gil_scoped_acquire gil;
    cached_.reset();
    cached_ = values();
    return cached_->second;
  }
  std::vector<double> result_array() const override { return take().first; }
  double result() const override {
    auto [v, array] = take();
    KCPP_CHECK(!array && v.size() == 1, ValueError, "Metric ", class_name(), " '", name(), "': result() gave ",
               v.size(), " values where a number was expected.");
    return v[0];
  }
  void reset_state() override {
    nb::gil_scoped_acquire gil;
    cached_.reset();
    call("reset_state", [&] { obj_.get().attr("reset_state")(); });
  }
  Json get_config() const override { return config_; }
  Json serialize() const override { return serialized_; }
  // Its add_variable state, which data-parallel training sums across workers (metrics.py).
  void visit_state(StateVisitor& visit) override {
    nb::gil_scoped_acquire gil;
    cached_.reset();
    call("its state across workers", [&] {
      nb::list out;
      for (nb::handle part : obj_.get().attr("_state_for_workers")()) {
        std::vector<double> v = nb::cast<std::vector<double>>(part);
        visit(v);
        out.append(nb::cast(v));
      }
      obj_.get().attr("_set_state_for_workers")(out);
    });
  }

 private:
  template <typename F>
  void call(const char* method, F&& f) const {
    try {
      f();
    } catch (const nb::python_error& e) {
      rethrow_python(e, std::string("In ") + method + " of metric " + class_name() + " '" + name() + "'");
    }
  }
  // The values array_result() read just before, else result() read now.
  std::pair<std::vector<double>, bool> take() const {
    nb::gil_scoped_acquire gil;
    if (!cached_) return values();
    auto out = std::move(*cached_);
    cached_.reset();
    return out;
  }
  // result() as float64 values, and whether it is an array (ndim > 0).
  std::pair<std::vector<double>, bool> values() const {
    nb::gil_scoped_acquire gil;
    std::pair<std::vector<double>, bool> out;
    call("result", [&] {
      nb::module_ np = nb::module_::import_("numpy");
      nb::object r = np.attr("asarray")(obj_.get().attr("result")(), "float64");
      out.second = nb::cast<int>(r.attr("ndim")) > 0;
      for (nb::handle v : r.attr("ravel")()) out.first.push_back(nb::cast<double>(v));
    });
    return out;
  }

  PyRef obj_;
  Json serialized_;
  mutable std::optional<std::pair<std::vector<double>, bool>> cached_;  // array_result()'s read; the GIL guards it
};

void bind_metrics(nb::module_& m) {
  nb::class_<Metric>(m, "Metric")
      .def_prop_ro("class_name", &Metric::class_name)
      .def_prop_ro("name", &Metric::name)
      .def("update_state", [](Metric& self, nb::handle y_true, nb::handle y_pred, nb::handle sample_weight) {
        self.update_state(from_object(y_true), optional_tensor(y_pred), optional_tensor(sample_weight));
      }, nb::arg("y_true"), nb::arg("y_pred").none(), nb::arg("sample_weight").none() = nb::none())
      .def("result", [](const Metric& self) -> nb::object {
        if (self.array_result()) return float32_array(self.result_array());
        return nb::float_(self.result());
      })
      .def("reset_state", &Metric::reset_state)
      .def("get_config_json", [](const Metric& self) { return self.get_config().dump(); });
  m.def("metric_get", [](const std::string& identifier, nb::handle y_pred_shape, const std::string& loss_name) {
    Shape shape = y_pred_shape.is_none() ? Shape{} : shape_from_py(y_pred_shape);
    return metrics::get(parse(identifier, "metric"), shape, loss_name);
  }, nb::arg("identifier"), nb::arg("y_pred_shape").none() = nb::none(), nb::arg("loss_name") = "");
  m.def("metric_classes", [] { return class_list(metrics::metric_classes()); });
  m.def("metric_from_python", [](nb::handle metric, const std::string& name, const std::string& serialized) -> MetricPtr {
    return std::make_shared<PyMetric>(metric, name, serialized);
  }, nb::arg("metric"), nb::arg("name"), nb::arg("serialized"));
  m.def("metric_from_function", [](const Model& function, const std::string& name, const std::string& serialized,
                                    nb::handle retrace) {
    return metrics::from_function(std::make_shared<const Model>(function), name, parse(serialized, "metric"),
                                  retrace_of(retrace, "metric"));
  }, nb::arg("function"), nb::arg("name"), nb::arg("serialized"), nb::arg("retrace").none() = nb::none());
}

void bind_model_training(nb::module_& m) {
  // Identifiers come as JSON text ("null" for none); objects win over identifiers (CompileOptions).
  // metrics / weighted_metrics: (identifiers as JSON text, objects for every output, objects by output name).
  using MetricsArg = std::tuple<std::string, std::vector<MetricPtr>, std::map<std::string, std::vector<MetricPtr>>>;
  m.def("compile", [](Model& self, const std::string& optimizer, OptimizerPtr optimizer_object,
                      const std::string& loss, std::vector<LossPtr> loss_objects, std::vector<double> loss_weights,
                      MetricsArg metrics, MetricsArg weighted_metrics) {
    CompileOptions o;
    o.optimizer = parse(optimizer, "optimizer");
    o.optimizer_object = std::move(optimizer_object);
    o.loss = parse(loss, "loss");
    o.loss_objects = std::move(loss_objects);
    o.loss_weights = std::move(loss_weights);
    o.metrics = parse(std::get<0>(metrics), "metrics");
    o.metric_objects = std::move(std::get<1>(metrics));
    o.output_metric_objects = std::move(std::get<2>(metrics));
    o.weighted_metrics = parse(std::get<0>(weighted_metrics), "weighted_metrics");
    o.weighted_metric_objects = std::move(std::get<1>(weighted_metrics));
    o.output_weighted_metric_objects = std::move(std::get<2>(weighted_metrics));
    self.compile(o);
  }, nb::arg("model"), nb::arg("optimizer"), nb::arg("optimizer_object").none(), nb::arg("loss"),
     nb::arg("loss_objects"), nb::arg("loss_weights"), nb::arg("metrics"), nb::arg("weighted_metrics"));

  // x: arrays, or a source (kerascpp._data; y is then None). validation_x: arrays, or a source.
  m.def("fit", [](Model& self, nb::handle x, nb::handle y, int64_t batch_size, int epochs, int verbose,
                  std::vector<CallbackPtr> cbs, double validation_split, nb::handle validation_x,
                  nb::handle validation_y, nb::handle validation_sample_weight, bool shuffle,
                  std::map<int64_t, double> class_weight, nb::handle sample_weight, int initial_epoch, RnnStates* states,
                  uint64_t seed, bool from_source, bool validation_from_source, int64_t steps_per_epoch,
                  int64_t validation_steps, int64_t validation_batch_size, int validation_freq,
                  std::vector<int> validation_epochs, std::shared_ptr<DistributedContext> distributed) {
    FitOptions o;
    o.distributed = std::move(distributed);
    o.steps_per_epoch = steps_per_epoch;
    o.validation_steps = validation_steps;
    o.validation_batch_size = validation_batch_size;
    o.validation_freq = validation_freq;
    o.validation_epochs = std::move(validation_epochs);
    std::optional<PySource> validation_source;
    if (validation_from_source) o.validation_dataset = &validation_source.emplace(validation_x);
    o.states = states;  // the Python model's stream (a stateful model's; None otherwise)
    o.batch_size = batch_size;
    o.epochs = epochs;
    o.verbose = verbose;
    o.callbacks = std::move(cbs);
    o.validation_split = validation_split;
    if (!validation_x.is_none() && !validation_from_source) {
      o.validation_x = tensors_from(validation_x);
      o.validation_y = tensors_from(validation_y);
      o.validation_sample_weight = optional_tensor(validation_sample_weight);
    }
    o.shuffle = shuffle;
    o.class_weight = std::move(class_weight);
    o.sample_weight = optional_tensor(sample_weight);
    o.initial_epoch = initial_epoch;
    o.seed = seed;
    std::shared_ptr<callbacks::History> history;
    if (from_source) {
      PySource source(x);
      nb::gil_scoped_release release;
      history = self.fit(source, o);
    } else {
      std::vector<Tensor> xs = tensors_from(x), ys = tensors_from(y);
      nb::gil_scoped_release release;
      history = self.fit(xs, ys, o);
    }
    return history;
  }, nb::arg("model"), nb::arg("x"), nb::arg("y").none(), nb::arg("batch_size"), nb::arg("epochs"), nb::arg("verbose"),
     nb::arg("callbacks"), nb::arg("validation_split"), nb::arg("validation_x").none(),
     nb::arg("validation_y").none(), nb::arg("validation_sample_weight").none(), nb::arg("shuffle"),
     nb::arg("class_weight"), nb::arg("sample_weight").none(), nb::arg("initial_epoch"), nb::arg("states").none(),
     nb::arg("seed") = 0, nb::arg("from_source") = false, nb::arg("validation_from_source") = false,
     nb::arg("steps_per_epoch") = 0, nb::arg("validation_steps") = 0, nb::arg("validation_batch_size") = 0,
     nb::arg("validation_freq") = 1, nb::arg("validation_epochs") = std::vector<int>(),
     nb::arg("distributed").none() = nb::none());

  m.def("evaluate", [](Model& self, nb::handle x, nb::handle y, int64_t batch_size, int verbose,
                       nb::handle sample_weight, std::vector<CallbackPtr> cbs, RnnStates* states, bool from_source,
                       int64_t steps, std::shared_ptr<DistributedContext> distributed) {
    EvaluateOptions o;
    o.distributed = std::move(distributed);
    o.states = states;
    o.batch_size = batch_size;
    o.verbose = verbose;
    o.sample_weight = optional_tensor(sample_weight);
    o.callbacks = std::move(cbs);
    o.steps = steps;
    Logs logs;
    if (from_source) {
      PySource source(x);
      nb::gil_scoped_release release;
      logs = self.evaluate(source, o);
    } else {
      std::vector<Tensor> xs = tensors_from(x), ys = tensors_from(y);
      nb::gil_scoped_release release;
      logs = self.evaluate(xs, ys, o);
    }
    return logs_to_py(logs);
  }, nb::arg("model"), nb::arg("x"), nb::arg("y").none(), nb::arg("batch_size"), nb::arg("verbose"),
     nb::arg("sample_weight").none(), nb::arg("callbacks"), nb::arg("states").none(), nb::arg("from_source") = false,
     nb::arg("steps") = 0, nb::arg("distributed").none() = nb::none());

  m.def("predict_source", [](const Model& self, nb::handle source, int64_t steps) {
    PySource s(source);
    std::vector<Tensor> out;
    {
      nb::gil_scoped_release release;
      out = self.predict(s, steps);
    }
    nb::list l;
    for (const Tensor& t : out) l.append(to_numpy(t));
    return l;
  }, nb::arg("model"), nb::arg("source"), nb::arg("steps") = 0);

  m.def("train_on_batch", [](Model& self, nb::handle x, nb::handle y, nb::handle sample_weight,
                             std::map<int64_t, double> class_weight, RnnStates* states) {
    std::vector<Tensor> xs = tensors_from(x), ys = tensors_from(y);
    Tensor sw = optional_tensor(sample_weight);
    Logs logs;
    {
      nb::gil_scoped_release release;
      logs = self.train_on_batch(xs, ys, sw, class_weight, states);
    }
    return logs_to_py(logs);
  }, nb::arg("model"), nb::arg("x"), nb::arg("y"), nb::arg("sample_weight").none(), nb::arg("class_weight"),
     nb::arg("states").none());

  m.def("test_on_batch", [](Model& self, nb::handle x, nb::handle y, nb::handle sample_weight, RnnStates* states) {
    std::vector<Tensor> xs = tensors_from(x), ys = tensors_from(y);
    Tensor sw = optional_tensor(sample_weight);
    Logs logs;
    {
      nb::gil_scoped_release release;
      logs = self.test_on_batch(xs, ys, sw, states);
    }
    return logs_to_py(logs);
  }, nb::arg("model"), nb::arg("x"), nb::arg("y"), nb::arg("sample_weight").none(), nb::arg("states").none());
}

}  // namespace

void bind_training(nb::module_& m) {
  bind_optimizers(m);
  bind_losses(m);
  bind_metrics(m);
  bind_model_training(m);
}

}  // namespace kcpy
