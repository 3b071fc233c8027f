// keras.layers.AveragePooling2D (keras/src/layers/pooling/average_pooling2d.py); see base_pooling.cpp.
#include "layers/layer_list.h"
#include "layers/pooling/base_pooling.h"

namespace kerascpp::layers {
LayerPtr make_average_pooling2d(Json c) {
  return make_base_pooling(std::move(c), "AveragePooling2D", 2, ops::PoolMode::average);
}
}  // namespace kerascpp::layers
