// Variable (a Keras weight) and the backend functions get_value / batch_get_value / set_value.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.h"

namespace kcpy {

void bind_variable(nb::module_& m) {
  nb::class_<Variable>(m, "Variable")
      .def_prop_ro("name", &Variable::name)
      .def_prop_ro("path", &Variable::path)
      .def_prop_ro("shape", [](const Variable& v) { return shape_to_py(v.shape()); })
      .def_prop_ro("dtype", [](const Variable& v) { return std::string(dtype_name(v.dtype())); })
      .def_prop_rw("trainable", &Variable::trainable, &Variable::set_trainable)
      // A view of the variable's storage (no copy); it keeps the storage alive.
      .def_prop_ro("value", [](const Variable& v) { return to_numpy(v.value()); })
      .def("numpy", [](const Variable& v) { return to_numpy(v.numpy()); }, "A copy of the value")
      .def("assign", [](Variable& v, nb::handle value) { v.assign(from_object(value)); }, nb::arg("value"))
      .def("mark_updated", &Variable::mark_updated,
           "Call after writing through `value` in place, so that prepared kernels (a BatchNormalization "
           "folded into the layer before it, oneDNN's convolution weights) are made again; assign() does it")
      .def("__repr__", [](const Variable& v) {
        return "<Variable path=" + v.path() + ", shape=" + shape_str(v.shape()) + ", dtype=" +
               std::string(dtype_name(v.dtype())) + ">";
      });
  m.def("get_value", [](const Variable& v) { return to_numpy(get_value(v)); });
  m.def("batch_get_value", [](const std::vector<VariablePtr>& vars) {
    nb::list out;
    for (const Tensor& t : batch_get_value(vars)) out.append(to_numpy(t));
    return out;
  });
  m.def("set_value", [](Variable& v, nb::handle value) { set_value(v, from_object(value)); });
}

}  // namespace kcpy
