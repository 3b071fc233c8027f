// keras.layers.ZeroPadding2D (keras/src/layers/reshaping/zero_padding2d.py): padding int, (h, w) or ((top,
// bottom), (left, right)), default 1.
// Shape rules and call: spatial_reshaping.cpp.
#include "layers/layer_list.h"
#include "layers/reshaping/spatial_reshaping.h"

namespace kerascpp::layers {
LayerPtr make_zero_padding2d(Json c) {
  return std::make_shared<ZeroPaddingBase>(std::move(c), "ZeroPadding2D", 2, Pads{{1, 1}, {1, 1}});
}
}  // namespace kerascpp::layers
