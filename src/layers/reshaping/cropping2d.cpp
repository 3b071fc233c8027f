// keras.layers.Cropping2D (keras/src/layers/reshaping/cropping2d.py): cropping int, (h, w) or ((top,
// bottom), (left, right)), default 0.
// Shape rules and call: spatial_reshaping.cpp.
#include "layers/layer_list.h"
#include "layers/reshaping/spatial_reshaping.h"

namespace kerascpp::layers {
LayerPtr make_cropping2d(Json c) {
  return std::make_shared<CroppingBase>(std::move(c), "Cropping2D", 2, Pads{{0, 0}, {0, 0}});
}
}  // namespace kerascpp::layers
