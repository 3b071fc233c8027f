// keras.layers.UpSampling1D (keras/src/layers/reshaping/up_sampling1d.py): x: (batch, steps, features)
// only, each step repeated size times, default 2.
// Shape rules and call: spatial_reshaping.cpp.
#include "layers/layer_list.h"
#include "layers/reshaping/spatial_reshaping.h"

namespace kerascpp::layers {
LayerPtr make_up_sampling1d(Json c) {
  return std::make_shared<UpSamplingBase>(std::move(c), "UpSampling1D", 1, false, false);
}
}  // namespace kerascpp::layers
