// keras.layers.ZeroPadding3D (keras/src/layers/reshaping/zero_padding3d.py): padding int, 3 ints or 3
// pairs, default 1.
// Shape rules and call: spatial_reshaping.cpp.
#include "layers/layer_list.h"
#include "layers/reshaping/spatial_reshaping.h"

namespace kerascpp::layers {
LayerPtr make_zero_padding3d(Json c) {
  return std::make_shared<ZeroPaddingBase>(std::move(c), "ZeroPadding3D", 3, Pads{{1, 1}, {1, 1}, {1, 1}});
}
}  // namespace kerascpp::layers
