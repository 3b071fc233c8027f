// Factories of every layer class; the map from Keras class names to them is in layer_list.cpp.
#pragma once

#include "kerascpp/layer.h"

namespace kerascpp::layers {

#define KCPP_LAYER(name, factory) LayerPtr factory(const Json& config);
#include "layers/layer_list.inc"
#undef KCPP_LAYER

}  // namespace kerascpp::layers
