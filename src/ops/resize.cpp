// resize: tf.image.resize (TF 2: half-pixel centres, antialias=False) for UpSampling2D, Resizing and
// CenterCrop. channels_first (n, c, h, w) runs as n * c one-channel images (n * c, h, w, 1).
#include "kernels/resize.h"

#include "ops/checks.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {

Tensor resize(const Tensor& x, int64_t height, int64_t width, ResizeMethod method, bool channels_first) {
  detail::check_float32("resize", x, "x");
  KCPP_CHECK(
      x.rank() == 4, ValueError,
      "resize: expected images of rank 4 (batch, height, width, channels) or (batch, channels, height, "
      "width). Received: x.shape=",
      shape_str(x.shape()));
  KCPP_CHECK(height > 0 && width > 0, ValueError,
             "resize: the target size must be positive. Received: size=(", height, ", ", width, ")");
  const int64_t n = channels_first ? x.dim(0) * x.dim(1) : x.dim(0);
  const int64_t c = channels_first ? 1 : x.dim(3);
  const int64_t h = x.dim(channels_first ? 2 : 1), w = x.dim(channels_first ? 3 : 2);
  Shape out = x.shape();
  out[channels_first ? 2 : 1] = height;
  out[channels_first ? 3 : 2] = width;
  Tensor y = Tensor::empty(out);
  if (y.size() == 0) return y;
  KCPP_CHECK(h > 0 && w > 0, ValueError,
             "resize: cannot resize an empty image. Received: x.shape=", shape_str(x.shape()));
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  switch (method) {
    case ResizeMethod::nearest:
      kernels::resize_nearest(xp, yp, n, h, w, c, height, width);
      break;
    case ResizeMethod::bilinear:
      kernels::resize_bilinear(xp, yp, n, h, w, c, height, width);
      break;
    case ResizeMethod::bicubic:
      kernels::resize_bicubic(xp, yp, n, h, w, c, height, width);
      break;
  }
  if (Recorder* r = tape_for({&x}))
    r->record("resize", {x}, y, [=, shape = x.shape()](const Tensor& dy) {
      Tensor dx = Tensor::empty(shape);
      kernels::resize_grad(static_cast<int>(method), dy.data<float>(), dx.data<float>(), n, h, w, c, height, width);
      return Grads{dx};
    });
  return y;
}

}  // namespace kerascpp::ops
