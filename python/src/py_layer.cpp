#include "py_layer.h"

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace kcpy {

PyRef::~PyRef() {
  if (p_ && Py_IsInitialized()) {
    nb::gil_scoped_acquire gil;
    Py_DECREF(p_);
  }
}

[[noreturn]] void rethrow_python(const nb::python_error& e, const std::string& where) {
  std::string msg = where + ": " + nb::cast<std::string>(nb::str(e.value()));
  if (e.matches(PyExc_ValueError)) throw kerascpp::ValueError(msg);
  if (e.matches(PyExc_TypeError)) throw kerascpp::TypeError(msg);
  if (e.matches(PyExc_NotImplementedError)) throw kerascpp::NotImplementedError(msg);
  if (e.matches(PyExc_OSError)) throw kerascpp::IOError(msg);
  std::string type = nb::cast<std::string>(nb::handle(e.type()).attr("__name__"));
  throw kerascpp::Error(where + ": " + type + ": " + nb::cast<std::string>(nb::str(e.value())));
}

namespace {

nb::object json_to_py(const Json& j) { return nb::module_::import_("json").attr("loads")(j.dump()); }

nb::object shapes_arg(const std::vector<Shape>& shapes) {
  if (shapes.size() == 1) return shape_to_py(shapes[0]);
  nb::list l;
  for (const Shape& s : shapes) l.append(shape_to_py(s));
  return l;
}

bool is_sequence(nb::handle h) { return nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h); }

std::vector<Tensor> tensors_of(nb::handle r) {
  std::vector<Tensor> out;
  if (is_sequence(r))
    for (nb::handle v : r) out.push_back(from_object(v));
  else
    out.push_back(from_object(r));
  return out;
}

}  // namespace

std::shared_ptr<PythonLayer> PythonLayer::from_instance(std::string class_name, nb::handle instance, const Json& config) {
  auto l = std::make_shared<PythonLayer>(config);
  l->class_name_ = std::move(class_name);
  l->instance_ = PyRef(instance);
  KCPP_CHECK(nb::hasattr(instance, "call"), TypeError, "Custom layer '", l->name(), "' (", l->class_name_,
             ") has no call() method");
  l->fn_ = PyRef(instance.attr("call"));
  return l;
}

std::shared_ptr<PythonLayer> PythonLayer::from_function(nb::handle fn, nb::handle arguments, std::optional<Shape> output_shape,
                                                        const Json& config) {
  auto l = std::make_shared<PythonLayer>(config);
  l->class_name_ = "Lambda";
  l->fn_ = PyRef(fn);
  if (!arguments.is_none()) l->arguments_ = PyRef(arguments);
  l->output_shape_ = std::move(output_shape);
  return l;
}

nb::object PythonLayer::run(nb::handle x) const {
  if (arguments_) return fn_.get()(x, **nb::borrow<nb::dict>(arguments_.get()));
  return fn_.get()(x);
}

void PythonLayer::do_build(const std::vector<Shape>& input_shapes) {
  if (!instance_) return;
  nb::gil_scoped_acquire gil;
  nb::handle inst = instance_.get();
  nb::object adder = nb::cpp_function(
      [this](const std::string& name, nb::handle shape, bool trainable) {
        return add_python_weight(name, shape_from_py(shape), trainable);
      },
      nb::arg("name"), nb::arg("shape"), nb::arg("trainable"));
  try {
    nb::setattr(inst, "_kerascpp_add_weight", adder);
    if (nb::hasattr(inst, "build")) inst.attr("build")(shapes_arg(input_shapes));
    nb::delattr(inst, "_kerascpp_add_weight");
  } catch (const nb::python_error& e) {
    if (nb::hasattr(inst, "_kerascpp_add_weight")) nb::delattr(inst, "_kerascpp_add_weight");
    rethrow_python(e, "In build() of layer '" + name() + "' (" + class_name_ + ")");
  }
  try {
    inst.attr("built") = true;
  } catch (const nb::python_error&) {  // a read-only attribute: keep going
    PyErr_Clear();
  }
}

std::vector<Shape> PythonLayer::compute_output_shape(const std::vector<Shape>& input_shapes) const {
  if (output_shape_) {
    KCPP_CHECK(!input_shapes.empty(), ValueError, "Lambda layer '", name(), "' received no inputs");
    Shape s{input_shapes[0].empty() ? -1 : input_shapes[0][0]};
    s.insert(s.end(), output_shape_->begin(), output_shape_->end());
    return {s};
  }
  nb::gil_scoped_acquire gil;
  try {
    if (instance_ && nb::hasattr(instance_.get(), "compute_output_shape")) {
      nb::object r = instance_.get().attr("compute_output_shape")(shapes_arg(input_shapes));
      if (!r.is_none()) {
        std::vector<Shape> out;
        bool many = nb::len(r) > 0 && is_sequence(r[0]);
        if (many)
          for (nb::handle s : r) out.push_back(shape_from_py(s));
        else
          out.push_back(shape_from_py(r));
        return out;
      }
    }
    // As Keras does for layers that do not declare it: run the layer once, here on zeros of batch 1.
    std::vector<Tensor> zeros;
    for (const Shape& s : input_shapes) {
      Shape c = s;
      for (int64_t& d : c) d = d < 0 ? 1 : d;
      zeros.push_back(Tensor::zeros(c));
    }
    nb::object x;
    if (zeros.size() == 1) {
      x = to_numpy(zeros[0], true);
    } else {
      nb::list l;
      for (const Tensor& t : zeros) l.append(to_numpy(t, true));
      x = l;
    }
    std::vector<Shape> out;
    for (const Tensor& t : tensors_of(run(x))) {
      Shape s = t.shape();
      if (!s.empty() && !input_shapes.empty() && !input_shapes[0].empty() && input_shapes[0][0] < 0) s[0] = -1;
      out.push_back(s);
    }
    return out;
  } catch (const nb::python_error& e) {
    rethrow_python(e, "Computing the output shape of layer '" + name() + "' (" + class_name_ + ")");
  }
}

std::vector<Tensor> PythonLayer::call(const std::vector<Tensor>& inputs, const CallContext& ctx) const {
  nb::gil_scoped_acquire gil;
  try {
    nb::object x;
    if (inputs.size() == 1) {
      x = to_numpy(inputs[0], true);
    } else {
      nb::list l;
      for (const Tensor& t : inputs) l.append(to_numpy(t, true));
      x = l;
    }
    return tensors_of(run(x));
  } catch (const nb::python_error& e) {
    rethrow_python(e, "In call() of layer '" + name() + "' (" + class_name_ + ")");
  }
}

namespace {

std::optional<Shape> lambda_output_shape(const Json& config) {
  auto it = config.find("output_shape");
  if (it == config.end() || !it->is_array()) return std::nullopt;
  Shape s;
  for (const auto& d : *it) {
    if (!d.is_number_integer()) return std::nullopt;
    s.push_back(d.get<int64_t>());
  }
  return s;
}

LayerPtr make_python_layer(const std::string& class_name, nb::handle cls, const Json& config) {
  nb::gil_scoped_acquire gil;
  const std::string name = config.value("name", std::string("?"));
  try {
    nb::object py_config = json_to_py(config);
    nb::object inst = nb::hasattr(cls, "from_config") ? cls.attr("from_config")(py_config)
                                                      : cls(**nb::borrow<nb::dict>(py_config));
    // Classes written against keras.layers.Layer by duck typing get kerascpp's add_weight.
    nb::module_::import_("kerascpp.layers").attr("_adopt")(inst);
    return PythonLayer::from_instance(class_name, inst, config);
  } catch (const nb::python_error& e) {
    rethrow_python(e, "Could not make custom layer '" + name + "' (" + class_name + ") from its config");
  }
}

// A Lambda run by the Python function fn, with the config's arguments.
LayerPtr make_lambda(nb::handle fn, const Json& config) {
  nb::object args = nb::none();
  auto it = config.find("arguments");
  if (it != config.end() && it->is_object() && !it->empty()) args = json_to_py(*it);
  return PythonLayer::from_function(fn, args, lambda_output_shape(config), config);
}

}  // namespace

CustomObjects make_custom_objects(nb::handle custom_objects, bool safe_mode) {
  CustomObjects out;
  if (!custom_objects.is_none())
    KCPP_CHECK(nb::isinstance<nb::dict>(custom_objects), TypeError, "custom_objects must be a dict. Received: ",
               nb::cast<std::string>(nb::repr(custom_objects)));
  nb::dict given = custom_objects.is_none() ? nb::dict() : nb::borrow<nb::dict>(custom_objects);
  for (auto [k, v] : given) {
    std::string key = nb::cast<std::string>(k);
    if (PyType_Check(v.ptr())) {
      // Keras looks a class up by its class name or its registered name ("package>Name").
      std::vector<std::string> names{key, key.substr(key.rfind('>') + 1),
                                     nb::cast<std::string>(v.attr("__name__"))};
      auto cls = std::make_shared<PyRef>(v);
      for (const std::string& n : names)
        if (!out.count(n))
          out[n] = [cls, n](const Json& config) { return make_python_layer(n, cls->get(), config); };
    } else if (PyCallable_Check(v.ptr())) {
      // A Lambda's function, found by its name or the layer's (models/functional.cpp).
      auto fn = std::make_shared<PyRef>(v);
      for (const std::string& n : {key, key.substr(key.rfind('>') + 1)})
        out[n] = [fn](const Json& config) {
          nb::gil_scoped_acquire gil;
          return make_lambda(fn->get(), config);
        };
    } else {
      // Any other object (a module such as TensorFlow) is only a global name of the functions that
      // load_model(safe_mode=False) loads from the file, as in Keras.
      KCPP_CHECK(!safe_mode, TypeError, "custom_objects['", key, "'] must be a layer class or a function (other "
                 "objects serve only the functions a file stores, with safe_mode=False). Received: ",
                 nb::cast<std::string>(nb::repr(v)));
    }
  }
  if (!safe_mode) {  // Keras's load_model(safe_mode=False): the Lambda's stored function runs
    auto objects = std::make_shared<PyRef>(given);
    out["Lambda"] = [objects](const Json& config) {
      nb::gil_scoped_acquire gil;
      try {
        nb::object fn = nb::module_::import_("kerascpp._lambda").attr("stored_function")(json_to_py(config), objects->get());
        return make_lambda(fn, config);
      } catch (const nb::python_error& e) {
        rethrow_python(e, "Loading the function of Lambda layer '" + config.value("name", std::string("?")) + "'");
      }
    };
  }
  return out;
}

void bind_custom(nb::module_& m) {
  // A custom layer object called on symbolic tensors (a model built in code): the layer that runs it.
  m.def("python_layer", [](nb::handle instance, const std::string& class_name, const std::string& config) -> LayerPtr {
    nb::module_::import_("kerascpp.layers").attr("_adopt")(instance);
    return PythonLayer::from_instance(class_name, instance, Json::parse(config));
  });
  // The layers of a loaded model that run Python give back the Python object they run.
  m.def("python_instance", [](const Layer& l) -> nb::object {
    auto* p = dynamic_cast<const PythonLayer*>(&l);
    if (!p || !p->instance().is_valid()) return nb::none();
    return nb::borrow(p->instance());
  });
}

}  // namespace kcpy
