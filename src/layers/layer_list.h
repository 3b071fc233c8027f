// Factories of every layer class; the map from Keras class names to them is in layer_list.cpp.
#pragma once

#include "kerascpp/layer.h"

namespace kerascpp::layers {

#define KCPP_LAYER(name, factory) LayerPtr factory(Json config);
#include "kerascpp/layer_list.inc"
#undef KCPP_LAYER

// Op nodes (layers/op_nodes/op_node.h): a Keras 3 op class named with its module
// ("keras.src.ops.numpy.Mean"), and tf_keras's TFOpLambda / SlicingOpLambda (cls) by the function in
// their config. NotImplementedError naming the op when kerascpp does not know it.
LayerPtr make_op_node(const std::string& cls, const Json& config);
LayerPtr make_tf_op_lambda(const std::string& cls, const Json& config);
// A Lambda whose function is saved by name, when that name is a Keras backend function kerascpp
// computes (l2_normalize, abs, mean, ...; `module` a Keras or TensorFlow module, or Keras 3's
// "builtins"): the op with the config's `arguments`. nullptr for any other name.
LayerPtr make_lambda_op(const std::string& function, const std::string& module, const Json& config);
// The function name a Lambda's config saves (Keras 3 {"class_name": "function", "config": NAME}, Keras 2
// NAME with function_type "function"); "" for bytecode.
std::string lambda_function_name(const Json& config);
// The module-qualified name of the Keras 3 op class `cls` ("GetItem" -> "keras.src.ops.numpy.GetItem"),
// or "" when kerascpp knows no op of that name.
std::string keras_op_class(const std::string& cls);

}  // namespace kerascpp::layers
