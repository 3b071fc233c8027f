// keras.layers.AveragePooling3D (keras/src/layers/pooling/average_pooling3d.py); see base_pooling.cpp.
#include "layers/layer_list.h"
#include "layers/pooling/base_pooling.h"

namespace kerascpp::layers {
LayerPtr make_average_pooling3d(Json c) {
  return make_base_pooling(std::move(c), "AveragePooling3D", 3, ops::PoolMode::average);
}
}  // namespace kerascpp::layers
