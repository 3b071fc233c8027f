// Fast tf.image.resize kernels (TF 2 semantics: half-pixel centres, no antialias) on
// x: (n, h, w, c) -> y: (n, oh, ow, c), float32. A channels_first tensor (n, c, h, w) is the same
// call with n * c images of one channel. Taps come from resize_taps.h; blending is in float in TF's
// order. Tested against ref::resize (ref/spatial.h). h, w >= 1 whenever oh * ow > 0.
#pragma once

#include <cstdint>

namespace kerascpp::kernels {

void resize_nearest(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh,
                    int64_t ow);
void resize_bilinear(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh,
                     int64_t ow);
void resize_bicubic(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh,
                    int64_t ow);

// The adjoint of the resize with method 0 nearest, 1 bilinear, 2 bicubic: dx (n, h, w, c) from
// dy (n, oh, ow, c); dx is overwritten.
void resize_grad(int method, const float* dy, float* dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh,
                 int64_t ow);
}  // namespace kerascpp::kernels
