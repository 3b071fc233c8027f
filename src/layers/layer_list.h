// Factories of every layer class; the map from Keras class names to them is in layer_list.cpp.
#pragma once

#include "kerascpp/layer.h"

namespace kerascpp::layers {

#define KCPP_LAYER(name, factory) LayerPtr factory(const Json& config);
#include "kerascpp/layer_list.inc"
#undef KCPP_LAYER

// Op nodes (layers/op_nodes/op_node.h): a Keras 3 op class named with its module
// ("keras.src.ops.numpy.Mean"), and tf_keras's TFOpLambda / SlicingOpLambda (cls) by the function in
// their config. NotImplementedError naming the op when kerascpp does not know it.
LayerPtr make_op_node(const std::string& cls, const Json& config);
LayerPtr make_tf_op_lambda(const std::string& cls, const Json& config);
// The module-qualified name of the Keras 3 op class `cls` ("GetItem" -> "keras.src.ops.numpy.GetItem"),
// or "" when kerascpp knows no op of that name.
std::string keras_op_class(const std::string& cls);

}  // namespace kerascpp::layers
