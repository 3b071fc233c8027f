// keras.layers.MaxPooling2D (keras/src/layers/pooling/max_pooling2d.py); see base_pooling.cpp.
#include "layers/layer_list.h"
#include "layers/pooling/base_pooling.h"

namespace kerascpp::layers {
LayerPtr make_max_pooling2d(Json c) {
  return make_base_pooling(std::move(c), "MaxPooling2D", 2, ops::PoolMode::max);
}
}  // namespace kerascpp::layers
