// keras.layers.Conv2D (keras/src/layers/convolutional/conv2d.py); see base_conv.cpp.
#include "layers/convolutional/base_conv.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
LayerPtr make_conv2d(Json c) { return make_base_conv(std::move(c), "Conv2D", 2); }
}  // namespace kerascpp::layers
