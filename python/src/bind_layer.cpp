// Layer: the layers of a loaded model (owned by the model; the Python wrapper keeps it alive).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.h"

namespace kcpy {

void bind_layer(nb::module_& m) {
  nb::class_<Layer>(m, "Layer")
      .def_prop_ro("name", &Layer::name)
      .def_prop_ro("class_name", &Layer::class_name)
      .def_prop_ro("trainable", &Layer::trainable)
      .def("set_trainable", &Layer::set_trainable)
      .def_prop_ro("built", &Layer::built)
      .def_prop_ro("weights", &Layer::weights)
      .def_prop_ro("trainable_weights", &Layer::trainable_weights)
      .def_prop_ro("non_trainable_weights", &Layer::non_trainable_weights)
      .def("get_weights", [](const Layer& l) {
        nb::list out;
        for (const Tensor& t : l.get_weights()) out.append(to_numpy(t));
        return out;
      })
      .def("set_weights", [](Layer& l, nb::handle values) {
        std::vector<Tensor> ts;
        for (nb::handle v : values) ts.push_back(from_object(v));
        l.set_weights(ts);
      })
      .def("count_params", &Layer::count_params)
      .def("get_config_json", [](const Layer& l) { return l.get_config().dump(); })
      .def("sublayers", &Layer::sublayers, nb::rv_policy::reference)
      .def("compute_output_shape", [](const Layer& l, nb::handle shapes) {
        std::vector<Shape> in;
        for (nb::handle s : shapes) in.push_back(shape_from_py(s));
        nb::list out;
        for (const Shape& s : l.compute_output_shape(in)) out.append(shape_to_py(s));
        return out;
      });
}

}  // namespace kcpy
