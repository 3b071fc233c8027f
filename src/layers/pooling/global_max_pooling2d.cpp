// keras.layers.GlobalMaxPooling2D (keras/src/layers/pooling/global_max_pooling2d.py): the max
// over the 2 spatial dim(s). Shape rules and call: base_global_pooling.cpp.
#include "layers/layer_list.h"
#include "layers/pooling/base_global_pooling.h"

namespace kerascpp::layers {
LayerPtr make_global_max_pooling2d(Json c) {
  return std::make_shared<BaseGlobalPooling>(std::move(c), "GlobalMaxPooling2D", 2, true);
}
}  // namespace kerascpp::layers
