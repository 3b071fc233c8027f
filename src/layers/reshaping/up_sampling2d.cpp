// keras.layers.UpSampling2D (keras/src/layers/reshaping/up_sampling2d.py): size (2, 2) by default;
// interpolation nearest repeats, bilinear / bicubic resize as tf.image.resize.
// Shape rules and call: spatial_reshaping.cpp.
#include "layers/layer_list.h"
#include "layers/reshaping/spatial_reshaping.h"

namespace kerascpp::layers {
LayerPtr make_up_sampling2d(Json c) {
  return std::make_shared<UpSamplingBase>(std::move(c), "UpSampling2D", 2, true, true);
}
}  // namespace kerascpp::layers
