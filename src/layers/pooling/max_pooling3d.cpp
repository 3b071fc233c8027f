// keras.layers.MaxPooling3D (keras/src/layers/pooling/max_pooling3d.py); see base_pooling.cpp.
#include "layers/layer_list.h"
#include "layers/pooling/base_pooling.h"

namespace kerascpp::layers {
LayerPtr make_max_pooling3d(Json c) {
  return make_base_pooling(std::move(c), "MaxPooling3D", 3, ops::PoolMode::max);
}
}  // namespace kerascpp::layers
