// keras.layers.GlobalAveragePooling2D (keras/src/layers/pooling/global_average_pooling2d.py): the mean
// over the 2 spatial dim(s). Shape rules and call: base_global_pooling.cpp.
#include "layers/layer_list.h"
#include "layers/pooling/base_global_pooling.h"

namespace kerascpp::layers {
LayerPtr make_global_average_pooling2d(Json c) {
  return std::make_shared<BaseGlobalPooling>(std::move(c), "GlobalAveragePooling2D", 2, false);
}
}  // namespace kerascpp::layers
