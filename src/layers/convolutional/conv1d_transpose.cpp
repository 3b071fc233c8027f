// keras.layers.Conv1DTranspose (keras/src/layers/convolutional/conv1d_transpose.py); see base_conv_transpose.cpp.
#include "layers/convolutional/base_conv.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
LayerPtr make_conv1d_transpose(Json c) {
  return make_base_conv_transpose(std::move(c), "Conv1DTranspose", 1);
}
}  // namespace kerascpp::layers
