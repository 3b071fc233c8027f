// keras.layers.Conv3DTranspose (keras/src/layers/convolutional/conv3d_transpose.py); see base_conv_transpose.cpp.
#include "layers/convolutional/base_conv.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
LayerPtr make_conv3d_transpose(Json c) {
  return make_base_conv_transpose(std::move(c), "Conv3DTranspose", 3);
}
}  // namespace kerascpp::layers
