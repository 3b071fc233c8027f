// Model and the functions that make one (load_model, model_from_json, clear_session). Loading,
// predicting and saving run with the GIL released.
#include <limits>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.h"
#include "kerascpp/threading.h"
#include "py_layer.h"  // PyRef

namespace kcpy {
namespace {

// Every LoadLimits field by its C++ name, for load_model's keyword arguments.
template <typename L, typename F>
void for_each_limit(L& l, F&& f) {
  f("max_config_bytes", l.max_config_bytes);
  f("max_json_depth", l.max_json_depth);
  f("max_layers", l.max_layers);
  f("max_nodes", l.max_nodes);
  f("max_weight_bytes", l.max_weight_bytes);
  f("max_rank", l.max_rank);
  f("max_tensor_elements", l.max_tensor_elements);
  f("max_member_bytes", l.max_member_bytes);
  f("max_compression_ratio", l.max_compression_ratio);
  f("allow_libhdf5", l.allow_libhdf5);
}

// load_model(..., max_layers=...): TypeError for a name LoadLimits lacks, ValueError for a negative value.
LoadLimits load_limits(const nb::dict& given) {
  LoadLimits limits;
  size_t used = 0;
  for_each_limit(limits, [&](const char* name, auto& field) {
    if (!given.contains(name)) return;
    ++used;
    using T = std::remove_reference_t<decltype(field)>;
    nb::handle value = given[name];
    if constexpr (std::is_same_v<T, bool>) {
      if (!nb::isinstance<nb::bool_>(value))
        throw nb::type_error(("load_model(" + std::string(name) + "=...): expected True or False").c_str());
      field = nb::cast<bool>(value);
      return;
    }
    const bool ok = !nb::isinstance<nb::bool_>(value) &&
                    (nb::isinstance<nb::int_>(value) || (std::is_floating_point_v<T> && nb::isinstance<nb::float_>(value)));
    if (!ok)
      throw nb::type_error(("load_model(" + std::string(name) + "=...): expected " +
                            (std::is_floating_point_v<T> ? "a number" : "an integer")).c_str());
    KCPP_CHECK(nb::cast<double>(value) >= 0, ValueError, "load_model(", name, "=", nb::cast<double>(value),
               "): a limit cannot be negative");
    KCPP_CHECK(std::is_floating_point_v<T> || nb::cast<double>(value) <= static_cast<double>(std::numeric_limits<T>::max()),
               ValueError, "load_model(", name, "=", nb::cast<double>(value), "): at most ", std::numeric_limits<T>::max());
    field = std::is_floating_point_v<T> ? static_cast<T>(nb::cast<double>(value)) : nb::cast<T>(value);
  });
  if (used != given.size())
    for (auto [key, value] : given) {
      bool known = false;
      for_each_limit(limits, [&](const char* name, auto&) { known = known || nb::cast<std::string>(key) == name; });
      if (!known) throw nb::type_error(("load_model() got an unexpected keyword argument '" + nb::cast<std::string>(key) + "'").c_str());
    }
  return limits;
}

}  // namespace


namespace {
nb::list arrays_from(const std::vector<Tensor>& ts) {
  nb::list out;
  for (const Tensor& t : ts) out.append(to_numpy(t));
  return out;
}
nb::list shapes_from(const std::vector<Shape>& ss) {
  nb::list out;
  for (const Shape& s : ss) out.append(shape_to_py(s));
  return out;
}
SaveOptions save_options(bool keras2) { return SaveOptions{keras2 ? KerasDialect::keras2 : KerasDialect::keras3}; }
}  // namespace

void bind_model(nb::module_& m) {
  nb::class_<RnnStates>(m, "RnnStates")
      .def(nb::init<>())
      .def("reset_states", &RnnStates::reset_states)
      .def_prop_ro("empty", &RnnStates::empty);
  nb::class_<Model>(m, "Model")
      .def_prop_ro("stateful", &Model::stateful)
      .def_prop_ro("name", &Model::name)
      .def("predict", [](const Model& self, nb::handle inputs, int64_t batch_size, RnnStates* states) {
        std::vector<Tensor> in = tensors_from(inputs), out;
        if (states) {  // the Python model's one stream: the GIL keeps two threads off it
          out = self.predict(in, *states, batch_size);
        } else {
          nb::gil_scoped_release release;
          out = self.predict(in, batch_size);
        }
        return arrays_from(out);
      }, nb::arg("inputs"), nb::arg("batch_size") = 32, nb::arg("states") = nb::none())
      .def("call", [](const Model& self, nb::handle inputs, nb::handle masks, RnnStates* states) {
        std::vector<Tensor> in = tensors_from(inputs), m, out;
        if (!masks.is_none())
          for (nb::handle h : masks) m.push_back(h.is_none() ? Tensor() : tensors_from(nb::make_tuple(h))[0]);
        if (states) {  // the Python model's one stream: the GIL keeps two threads off it
          out = self(in, *states, m);
        } else {
          nb::gil_scoped_release release;
          out = self(in, m);
        }
        return arrays_from(out);
      }, nb::arg("inputs"), nb::arg("masks") = nb::none(), nb::arg("states") = nb::none())
      .def("call_training", [](const Model& self, nb::handle inputs, uint64_t seed) {
        std::vector<Tensor> in = tensors_from(inputs), out;
        {
          nb::gil_scoped_release release;
          out = self.call_training(in, seed);
        }
        return arrays_from(out);
      }, nb::arg("inputs"), nb::arg("seed"))
      .def("layers", &Model::layers, nb::rv_policy::reference)
      .def("metrics_names", &Model::metrics_names)
      .def("inputs", &Model::inputs)
      .def("outputs", &Model::outputs)
      .def("layer_outputs", &Model::layer_outputs)
      .def("as_layer", [](const Model& self) -> LayerPtr { return self.as_layer(); })
      .def("get_layer", nb::overload_cast<const std::string&>(&Model::get_layer, nb::const_), nb::rv_policy::reference)
      .def("get_layer", nb::overload_cast<int>(&Model::get_layer, nb::const_), nb::rv_policy::reference)
      .def("weights", &Model::weights)
      .def("trainable_weights", &Model::trainable_weights)
      .def("non_trainable_weights", &Model::non_trainable_weights)
      .def("get_weights", [](const Model& self) { return arrays_from(self.get_weights()); })
      .def("set_weights", [](Model& self, nb::handle values) { self.set_weights(tensors_from(values)); })
      .def("count_params", &Model::count_params)
      .def_prop_ro("input_shapes", [](const Model& self) { return shapes_from(self.input_shapes()); })
      .def_prop_ro("output_shapes", [](const Model& self) { return shapes_from(self.output_shapes()); })
      .def_prop_ro("input_names", &Model::input_names)
      .def_prop_ro("output_names", &Model::output_names)
      .def("get_config_json", [](const Model& self) { return self.get_config().dump(); })
      .def("training_config_json", [](const Model& self) { return self.training_config().dump(); })
      .def("to_json", [](const Model& self, bool keras2) {
        return self.to_json(keras2 ? KerasDialect::keras2 : KerasDialect::keras3);
      }, nb::arg("keras2") = false)
      .def("summary", &Model::summary)
      // Training state (compile / fit themselves are bound in bind_training.cpp).
      .def_rw("stop_training", &Model::stop_training)
      .def_prop_ro("compiled", &Model::compiled)
      .def("optimizer", &Model::optimizer)
      .def("compile_config_json", [](const Model& self) { return self.compile_config().dump(); })
      .def("save", [](const Model& self, const std::string& path, bool keras2) {
        nb::gil_scoped_release release;
        self.save(path, save_options(keras2));
      }, nb::arg("path"), nb::arg("keras2") = false)
      .def("save_weights", [](const Model& self, const std::string& path, bool keras2) {
        nb::gil_scoped_release release;
        self.save_weights(path, save_options(keras2));
      }, nb::arg("path"), nb::arg("keras2") = false)
      .def("load_weights", [](Model& self, const std::string& path, bool by_name, bool skip_mismatch) {
        nb::gil_scoped_release release;  // warnings take the GIL back (bind_errors.cpp)
        self.load_weights(path, LoadWeightsOptions{by_name, skip_mismatch});
      }, nb::arg("path"), nb::arg("by_name") = false, nb::arg("skip_mismatch") = false);

  m.def("load_model", [](const std::string& path, bool compile, nb::handle custom_objects, bool safe_mode,
                         nb::handle resolve, nb::dict limits, bool mmap) {
    LoadOptions options;
    options.compile = compile;
    options.mmap_weights = mmap;
    options.limits = load_limits(limits);
    options.custom_objects = make_custom_objects(custom_objects, safe_mode);
    if (!resolve.is_none()) {
      // resolve(kind, entry as JSON, output shape): the user's loss or metric from custom_objects, or None.
      auto ref = std::make_shared<PyRef>(resolve);
      auto make = [ref]<typename Ptr>(const char* kind, const Json& entry, const Shape& shape) -> Ptr {
        nb::gil_scoped_acquire gil;
        try {
          nb::object r = ref->get()(kind, entry.dump(), shape_to_py(shape));
          return r.is_none() ? nullptr : nb::cast<Ptr>(r);
        } catch (const nb::python_error& e) {
          rethrow_python(e, std::string("Making the ") + kind + " " + entry.dump() + " from custom_objects");
        } catch (const nb::cast_error&) {
          KCPP_THROW(ValueError, "custom_objects made no kerascpp ", kind, " for ", entry.dump());
        }
      };
      options.custom_loss = [make](const Json& entry, const Shape& shape) {
        return make.template operator()<losses::LossPtr>("loss", entry, shape);
      };
      options.custom_metric = [make](const Json& entry, const Shape& shape) {
        return make.template operator()<metrics::MetricPtr>("metric", entry, shape);
      };
      options.custom_schedule = [make](const Json& entry) {
        return make.template operator()<optimizers::SchedulePtr>("schedule", entry, Shape{});
      };
    }
    nb::gil_scoped_release release;  // custom layers take the GIL back when they run Python
    return load_model(path, options);
  }, nb::arg("path"), nb::arg("compile") = true, nb::arg("custom_objects") = nb::none(), nb::arg("safe_mode") = true,
     nb::arg("resolve").none() = nb::none(), nb::arg("limits") = nb::dict(), nb::arg("mmap") = false);
  m.def("load_limits", [] {  // the defaults, by name
    nb::dict d;
    const LoadLimits defaults;
    for_each_limit(defaults, [&](const char* name, auto value) { d[name] = value; });
    return d;
  });
  m.def("model_from_json", [](const std::string& json, nb::handle custom_objects, bool safe_mode) {
    CustomObjects custom = make_custom_objects(custom_objects, safe_mode);
    nb::gil_scoped_release release;
    return model_from_json(json, custom);
  }, nb::arg("json"), nb::arg("custom_objects") = nb::none(), nb::arg("safe_mode") = true);
  m.def("clear_session", &clear_session);
  m.def("set_num_threads", &kerascpp::set_num_threads, nb::arg("n"));  // kerascpp/threading.h
  m.def("num_threads", &kerascpp::num_threads);
}

}  // namespace kcpy
