// kerascpp/layers.h: layers made in code, and keras.Input.
#include "kerascpp/layers.h"

#include "core/naming.h"
#include "layers/config_utils.h"
#include "layers/keras_arguments.h"
#include "models/keras_tensor.h"

namespace kerascpp::layers {

LayerRef layer(const std::string& class_name, const Json& arguments) {
  KCPP_CHECK(arguments.is_object(), ValueError, class_name, " takes its arguments as a config object. Received: ",
             arguments.dump().substr(0, 200));
  KCPP_CHECK(class_name != "InputLayer" || arguments.contains("batch_shape") || arguments.contains("shape"),
             ValueError, "InputLayer needs a `shape` or `batch_shape`");
  if (class_name == "InputLayer" && arguments.contains("shape")) {
    Json c = arguments;
    Json shape = Json::array({c.value("batch_size", Json())});
    for (const Json& d : c["shape"]) shape.push_back(d);
    c.erase("shape");
    c.erase("batch_size");
    c["batch_shape"] = shape;
    return make_layer(class_name, c);
  }
  return make_layer(class_name, layer_arguments(class_name, arguments));
}

Json layer_config(const std::string& class_name, const Json& arguments) {
  return layer_arguments(class_name, arguments);
}

KerasTensor Input(const Shape& shape, const Json& options) {
  KCPP_CHECK(options.is_object(), ValueError, "Input takes its options as a config object");
  for (const auto& [key, v] : options.items())
    KCPP_CHECK(key == "batch_size" || key == "dtype" || key == "name" || key == "sparse" || key == "optional",
               ValueError, "Input() got an unexpected keyword argument '", key, "'");
  KCPP_CHECK(!options.value("sparse", false), NotImplementedError, "Input(sparse=True) is not supported by kerascpp");
  Json batch_shape = Json::array({options.value("batch_size", Json())});
  for (int64_t d : shape) batch_shape.push_back(d < 0 ? Json() : Json(d));
  const Json name = options.value("name", Json());
  Json config = {{"batch_shape", batch_shape},
                 {"dtype", options.value("dtype", Json("float32"))},
                 {"sparse", false},
                 {"ragged", false},
                 {"name", name.is_string() ? name.get<std::string>() : unique_name("input_layer")},
                 {"optional", options.value("optional", false)}};
  return models::input_tensor(make_layer("InputLayer", config));
}

}  // namespace kerascpp::layers
