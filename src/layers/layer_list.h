// Factories of every layer class; the map from Keras class names to them is in layer_list.cpp.
#pragma once

#include "kerascpp/layer.h"

namespace kerascpp::layers {

#define KCPP_LAYER(name, factory) LayerPtr factory(const Json& config);
#define KCPP_OP_NODE(name, factory) LayerPtr factory(const Json& config);
#include "kerascpp/layer_list.inc"
#undef KCPP_LAYER
#undef KCPP_OP_NODE

}  // namespace kerascpp::layers
