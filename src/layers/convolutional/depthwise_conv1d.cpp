// keras.layers.DepthwiseConv1D (keras/src/layers/convolutional/depthwise_conv1d.py); see base_depthwise_conv.cpp.
#include "layers/convolutional/base_conv.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
LayerPtr make_depthwise_conv1d(Json c) {
  return make_base_depthwise_conv(std::move(c), "DepthwiseConv1D", 1);
}
}  // namespace kerascpp::layers
