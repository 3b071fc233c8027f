// keras.layers.MaxPooling1D (keras/src/layers/pooling/max_pooling1d.py); see base_pooling.cpp.
#include "layers/layer_list.h"
#include "layers/pooling/base_pooling.h"

namespace kerascpp::layers {
LayerPtr make_max_pooling1d(Json c) {
  return make_base_pooling(std::move(c), "MaxPooling1D", 1, ops::PoolMode::max);
}
}  // namespace kerascpp::layers
