// keras.layers.Conv2DTranspose (keras/src/layers/convolutional/conv2d_transpose.py); see base_conv_transpose.cpp.
#include "layers/convolutional/base_conv.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
LayerPtr make_conv2d_transpose(const Json& c) { return make_base_conv_transpose(c, "Conv2DTranspose", 2); }
}  // namespace kerascpp::layers
