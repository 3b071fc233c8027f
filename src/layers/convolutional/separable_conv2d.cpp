// keras.layers.SeparableConv2D (keras/src/layers/convolutional/separable_conv2d.py); see base_separable_conv.cpp.
#include "layers/convolutional/base_conv.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
LayerPtr make_separable_conv2d(Json c) {
  return make_base_separable_conv(std::move(c), "SeparableConv2D", 2);
}
}  // namespace kerascpp::layers
