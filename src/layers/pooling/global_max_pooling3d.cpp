// keras.layers.GlobalMaxPooling3D (keras/src/layers/pooling/global_max_pooling3d.py): the max
// over the 3 spatial dim(s). Shape rules and call: base_global_pooling.cpp.
#include "layers/layer_list.h"
#include "layers/pooling/base_global_pooling.h"

namespace kerascpp::layers {
LayerPtr make_global_max_pooling3d(Json c) {
  return std::make_shared<BaseGlobalPooling>(std::move(c), "GlobalMaxPooling3D", 3, true);
}
}  // namespace kerascpp::layers
