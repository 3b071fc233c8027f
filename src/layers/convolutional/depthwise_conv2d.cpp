// keras.layers.DepthwiseConv2D (keras/src/layers/convolutional/depthwise_conv2d.py); see base_depthwise_conv.cpp.
#include "layers/convolutional/base_conv.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
LayerPtr make_depthwise_conv2d(Json c) {
  return make_base_depthwise_conv(std::move(c), "DepthwiseConv2D", 2);
}
}  // namespace kerascpp::layers
