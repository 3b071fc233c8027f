// keras.layers.SeparableConv1D (keras/src/layers/convolutional/separable_conv1d.py); see base_separable_conv.cpp.
#include "layers/convolutional/base_conv.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
LayerPtr make_separable_conv1d(Json c) {
  return make_base_separable_conv(std::move(c), "SeparableConv1D", 1);
}
}  // namespace kerascpp::layers
