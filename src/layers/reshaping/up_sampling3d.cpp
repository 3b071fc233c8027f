// keras.layers.UpSampling3D (keras/src/layers/reshaping/up_sampling3d.py): nearest only, size (2, 2, 2) by
// default.
// Shape rules and call: spatial_reshaping.cpp.
#include "layers/layer_list.h"
#include "layers/reshaping/spatial_reshaping.h"

namespace kerascpp::layers {
LayerPtr make_up_sampling3d(Json c) {
  return std::make_shared<UpSamplingBase>(std::move(c), "UpSampling3D", 3, true, false);
}
}  // namespace kerascpp::layers
