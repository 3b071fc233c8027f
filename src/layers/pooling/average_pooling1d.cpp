// keras.layers.AveragePooling1D (keras/src/layers/pooling/average_pooling1d.py); see base_pooling.cpp.
#include "layers/layer_list.h"
#include "layers/pooling/base_pooling.h"

namespace kerascpp::layers {
LayerPtr make_average_pooling1d(Json c) {
  return make_base_pooling(std::move(c), "AveragePooling1D", 1, ops::PoolMode::average);
}
}  // namespace kerascpp::layers
