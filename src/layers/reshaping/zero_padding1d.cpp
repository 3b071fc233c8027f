// keras.layers.ZeroPadding1D (keras/src/layers/reshaping/zero_padding1d.py): x: (batch, steps, features),
// padding int or (left, right), default 1.
// Shape rules and call: spatial_reshaping.cpp.
#include "layers/layer_list.h"
#include "layers/reshaping/spatial_reshaping.h"

namespace kerascpp::layers {
LayerPtr make_zero_padding1d(Json c) {
  return std::make_shared<ZeroPaddingBase>(std::move(c), "ZeroPadding1D", 1, Pads{{1, 1}});
}
}  // namespace kerascpp::layers
