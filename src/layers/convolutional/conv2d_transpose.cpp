// keras.layers.Conv2DTranspose (keras/src/layers/convolutional/conv2d_transpose.py); see base_conv_transpose.cpp.
#include "layers/convolutional/base_conv.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
LayerPtr make_conv2d_transpose(Json c) {
  return make_base_conv_transpose(std::move(c), "Conv2DTranspose", 2);
}
}  // namespace kerascpp::layers
