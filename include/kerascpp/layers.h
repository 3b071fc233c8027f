// Layer constructors, one per Keras layer class kerascpp supports (include/kerascpp/layer_list.inc),
// named as in keras.layers and taking Keras's arguments as a config object; the rest take Keras's
// defaults. A layer made without a name is named as Keras names it (dense, dense_1, ...).
//
//   auto x = kerascpp::layers::Input({28, 28, 1});
//   auto h = kerascpp::layers::Conv2D({{"filters", 8}, {"kernel_size", 3}, {"activation", "relu"}})(x);
//   auto y = kerascpp::layers::Dense({{"units", 10}, {"activation", "softmax"}})(
//       kerascpp::layers::Flatten()(h));
//
// ValueError naming the class for an argument Keras's layer does not take or a missing required one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kerascpp/keras_tensor.h"

namespace kerascpp::layers {

// The layer of Keras class `class_name` from Keras's arguments (keras.layers.<class_name>(**arguments)).
LayerRef layer(const std::string& class_name, const Json& arguments = Json::object());

// Keras 3's arguments for every layer class here, and for the classes of keras.initializers,
// regularizers and constraints: {"layers": {Class: {"arguments" (Keras's positional order), "required",
// "defaults" (Keras's config of a layer given only the required ones), "forms", "derived"}},
// "objects": {family: {"classes": {Class: {"arguments", "defaults"}}, "aliases": {name: Class}}}},
// written from real Keras by scripts/make_keras_arguments.py.
const Json& keras_arguments();

// keras.layers.<class_name>(**arguments) as the config Keras gives the layer (its defaults for the rest,
// in Keras's forms), without making the layer: also for the recurrent cells an RNN takes (LSTMCell...).
Json layer_config(const std::string& class_name, const Json& arguments);

// keras.Input: a symbolic input of `shape` (without the batch dimension; -1 for an unknown one).
// options: "batch_size", "dtype", "name", as Keras's keyword arguments.
KerasTensor Input(const Shape& shape, const Json& options = Json::object());

// A Lambda layer's function given in C++ (Keras's custom_objects for a Lambda, whose function kerascpp
// never takes from the file): it gets the layer's inputs and the config's `arguments` and returns the
// outputs. Bind it under the Lambda's function name (a Keras 3 named function, a Keras 2 function
// saved by name) or the layer's name, which is tried next:
//   CustomObjects custom{{"scaling", layers::lambda([](const std::vector<Tensor>& x, const Json& a) {
//     Tensor y = x[0].copy();  // y = x * a["scale"]
//     for (int64_t i = 0; i < y.size(); ++i) y.data<float>()[i] *= a["scale"].get<float>();
//     return std::vector<Tensor>{y};
//   })}};
// The output shape is the config's `output_shape`, else what the function returns for a batch of one.
// The function computes values only: training through it is refused with a NotImplementedError.
using LambdaFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const Json& arguments)>;
LayerFactory lambda(LambdaFunction fn);

#define KCPP_LAYER(name, factory) \
  inline LayerRef name(const Json& arguments = Json::object()) { return layer(#name, arguments); }
#include "kerascpp/layer_list.inc"
#undef KCPP_LAYER

}  // namespace kerascpp::layers
