// keras.layers.GlobalMaxPooling1D (keras/src/layers/pooling/global_max_pooling1d.py): the max
// over the 1 spatial dim(s). Shape rules and call: base_global_pooling.cpp.
#include "layers/layer_list.h"
#include "layers/pooling/base_global_pooling.h"

namespace kerascpp::layers {
LayerPtr make_global_max_pooling1d(Json c) {
  return std::make_shared<BaseGlobalPooling>(std::move(c), "GlobalMaxPooling1D", 1, true);
}
}  // namespace kerascpp::layers
