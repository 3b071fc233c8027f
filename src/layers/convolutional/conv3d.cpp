// keras.layers.Conv3D (keras/src/layers/convolutional/conv3d.py); see base_conv.cpp.
#include "layers/convolutional/base_conv.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
LayerPtr make_conv3d(Json c) { return make_base_conv(std::move(c), "Conv3D", 3); }
}  // namespace kerascpp::layers
