// keras.ops.image.resize as Keras 3 runs it on the TensorFlow backend
// (keras/src/backend/tensorflow/image.py: resize): optionally crop or pad to the target aspect ratio,
// then tf.image.resize. Shared by Resizing and CenterCrop (whose upsizing path is Keras's
// smart_resize, keras/src/utils/image_utils.py: the same crop then a bilinear resize).
//
// x: (batch, h, w, c) or unbatched (h, w, c); channels_first: (batch, c, h, w) or (c, h, w).
#pragma once

#include "kerascpp/tensor.h"
#include "ops/ops.h"

namespace kerascpp::layers {

enum class AspectRatio { stretch, crop, pad };

struct ImageResize {
  int64_t height = 0, width = 0;
  ops::ResizeMethod method = ops::ResizeMethod::bilinear;
  AspectRatio aspect = AspectRatio::stretch;
  float fill_value = 0.f;  // pad only
  bool channels_first = false;
  // The crop / pad box is computed in float32 as the TF backend does (Resizing); smart_resize on
  // static shapes computes it with Python floats (CenterCrop): double_box = true.
  bool double_box = false;
};

// ValueError unless x has rank 3 or 4; `who` names the layer.
Tensor image_resize(const Tensor& x, const ImageResize& r, const std::string& who);

// The input's (height axis, width axis) for rank 3 or 4.
std::pair<int, int> image_axes(int rank, bool channels_first);
// The shape of x resized to r's (height, width): the output shape of Resizing and CenterCrop.
// ValueError naming `who` unless x has rank 3 or 4.
Shape resized_image_shape(const Shape& x, const ImageResize& r, const std::string& who);

}  // namespace kerascpp::layers
