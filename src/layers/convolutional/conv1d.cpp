// keras.layers.Conv1D (keras/src/layers/convolutional/conv1d.py); see base_conv.cpp.
#include "layers/convolutional/base_conv.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
LayerPtr make_conv1d(Json c) { return make_base_conv(std::move(c), "Conv1D", 1); }
}  // namespace kerascpp::layers
