// keras.layers.Cropping3D (keras/src/layers/reshaping/cropping3d.py): cropping int, 3 ints or 3 pairs,
// default 1.
// Shape rules and call: spatial_reshaping.cpp.
#include "layers/layer_list.h"
#include "layers/reshaping/spatial_reshaping.h"

namespace kerascpp::layers {
LayerPtr make_cropping3d(Json c) {
  return std::make_shared<CroppingBase>(std::move(c), "Cropping3D", 3, Pads{{1, 1}, {1, 1}, {1, 1}});
}
}  // namespace kerascpp::layers
