// Building models in code (kerascpp/keras_tensor.h, kerascpp/layers.h): symbolic tensors, layers made
// from Keras arguments, calls on symbolic tensors, Model(inputs, outputs) and Sequential. The Keras
// shape of the API (positional arguments, defaults, nesting) is python/kerascpp/_builder.py's.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>

#include "common.h"
#include "kerascpp/initializers.h"
#include "core/naming.h"
#include "kerascpp/layers.h"

namespace kcpy {

namespace {
Json parse(const std::string& text) { return Json::parse(text); }
TensorNest nest(bool single, const std::vector<std::string>& keys) { return TensorNest{single, keys}; }
}  // namespace

void bind_build(nb::module_& m) {
  nb::class_<KerasTensor>(m, "KerasTensor")
      .def_prop_ro("shape", [](const KerasTensor& t) { return shape_to_py(t.shape()); })
      .def_prop_ro("dtype", [](const KerasTensor&) { return "float32"; })
      .def_prop_ro("name", [](const KerasTensor& t) { return t.layer()->name(); })
      .def_prop_ro("ndim", [](const KerasTensor& t) { return t.shape().size(); })
      .def_prop_ro("_layer", [](const KerasTensor& t) { return t.layer(); })
      .def_prop_ro("_index", &KerasTensor::index)
      .def("__eq__", [](const KerasTensor& a, nb::handle b) {
        return nb::isinstance<KerasTensor>(b) && a == nb::cast<const KerasTensor&>(b);
      })
      .def("__hash__", [](const KerasTensor& t) {
        return std::hash<const void*>()(t.node().get()) ^ static_cast<size_t>(t.index());
      })
      .def("__repr__", [](const KerasTensor& t) {
        std::string s = "(";
        for (size_t i = 0; i < t.shape().size(); ++i)
          s += (i ? ", " : "") + (t.shape()[i] < 0 ? std::string("None") : std::to_string(t.shape()[i]));
        s += t.shape().size() == 1 ? ",)" : ")";
        return "<KerasTensor shape=" + s + ", dtype=float32, name=" + t.layer()->name() + ">";
      });
  m.def("make_layer", [](const std::string& cls, const std::string& config) -> LayerPtr {
    return layers::layer(cls, parse(config));
  });
  // keras.ops on symbolic tensors or arrays (kerascpp/ops.py): the op node of a keras.ops class with
  // its config and call template, run once on arrays.
  m.def("op_node", [](const std::string& cls, const std::string& config) -> LayerPtr {
    KCPP_CHECK(cls.rfind("keras.src.ops.", 0) == 0, ValueError, "Not a keras.ops class: ", cls);
    return make_layer(cls, parse(config));
  });
  m.def("run_op", [](const LayerPtr& op, nb::handle arrays) {
    nb::list out;
    for (const Tensor& t : op->call(tensors_from(arrays), CallContext{})) out.append(to_numpy(t));
    return out;
  });
  m.def("unique_name", [](const std::string& prefix) { return unique_name(prefix); });
  m.def("to_snake_case", [](const std::string& name) { return to_snake_case(name); });
  m.def("input_tensor", [](nb::handle shape, const std::string& options) { return layers::Input(shape_from_py(shape), parse(options)); });
  m.def("call_layer", [](const LayerPtr& layer, const std::string& call, const std::vector<KerasTensor>& tensors,
                         std::optional<uint64_t> seed) { return call_layer_json(layer, parse(call), tensors, seed); },
        nb::arg("layer"), nb::arg("call"), nb::arg("tensors"), nb::arg("seed") = nb::none());
  m.def("functional", [](const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs,
                         const std::string& name, bool in_single, const std::vector<std::string>& in_keys,
                         bool out_single, const std::vector<std::string>& out_keys) {
    return Model(inputs, outputs, name, nest(in_single, in_keys), nest(out_single, out_keys));
  });
  m.def("initial_value", [](const std::string& config, nb::handle shape, std::optional<uint64_t> seed) {
    return to_numpy(initializers::initial_value(parse(config), shape_from_py(shape), seed));
  });
  m.def("apply_constraint", [](const std::string& config, nb::handle w) {
    return to_numpy(constraints::apply(parse(config), from_object(w)));
  });
  m.def("layer_config", [](const std::string& cls, const std::string& arguments) {
    return layers::layer_config(cls, parse(arguments)).dump();
  });
  m.def("keras_arguments", [] { return layers::keras_arguments().dump(); });
  m.def("model_of_graph", [](const LayerPtr& graph) { return Model(graph); });
  m.def("sequential", [](const std::vector<LayerPtr>& entries, const std::string& name, std::optional<uint64_t> seed) {
    std::vector<SequentialEntry> e(entries.begin(), entries.end());
    return Sequential(e, name, seed);
  }, nb::arg("entries"), nb::arg("name"), nb::arg("seed") = nb::none());
}

}  // namespace kcpy
