// keras.layers.Cropping1D (keras/src/layers/reshaping/cropping1d.py): x: (batch, steps, features) only,
// cropping int or (start, end), default (1, 1).
// Shape rules and call: spatial_reshaping.cpp.
#include "layers/layer_list.h"
#include "layers/reshaping/spatial_reshaping.h"

namespace kerascpp::layers {
LayerPtr make_cropping1d(Json c) {
  return std::make_shared<CroppingBase>(std::move(c), "Cropping1D", 1, Pads{{1, 1}});
}
}  // namespace kerascpp::layers
