// Fast resize: taps computed once per output row and column, then a contiguous loop over channels.
#include "kernels/resize.h"

#include <cstring>

#include "kernels/resize_taps.h"

namespace kerascpp::kernels {

void resize_nearest(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh,
                    int64_t ow) {
  if (c == 0) return;  // no elements: x may be null, which memcpy may not be given
  const float sy = resize_scale(h, oh), sx = resize_scale(w, ow);
  for (int64_t b = 0; b < n; ++b) {
    const float* xb = x + b * h * w * c;
    for (int64_t oy = 0; oy < oh; ++oy) {
      const float* row = xb + nearest_tap(oy, sy, h) * w * c;
      for (int64_t ox = 0; ox < ow; ++ox, y += c)
        std::memcpy(y, row + nearest_tap(ox, sx, w) * c, sizeof(float) * c);
    }
  }
}

void resize_bilinear(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh,
                     int64_t ow) {
  if (c == 0) return;  // no elements: x may be null, which memcpy may not be given
  const float sy = resize_scale(h, oh), sx = resize_scale(w, ow);
  for (int64_t b = 0; b < n; ++b) {
    const float* xb = x + b * h * w * c;
    for (int64_t oy = 0; oy < oh; ++oy) {
      const LinearTaps ty = bilinear_taps(oy, sy, h);
      const float* top = xb + ty.lower * w * c;
      const float* bottom = xb + ty.upper * w * c;
      for (int64_t ox = 0; ox < ow; ++ox, y += c) {
        const LinearTaps tx = bilinear_taps(ox, sx, w);
        const float *tl = top + tx.lower * c, *tr = top + tx.upper * c;
        const float *bl = bottom + tx.lower * c, *br = bottom + tx.upper * c;
        for (int64_t k = 0; k < c; ++k) {  // TF's compute_lerp
          const float t = tl[k] + (tr[k] - tl[k]) * tx.lerp;
          const float u = bl[k] + (br[k] - bl[k]) * tx.lerp;
          y[k] = t + (u - t) * ty.lerp;
        }
      }
    }
  }
}

void resize_bicubic(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh,
                    int64_t ow) {
  if (c == 0) return;  // no elements: x may be null, which memcpy may not be given
  const float sy = resize_scale(h, oh), sx = resize_scale(w, ow);
  for (int64_t b = 0; b < n; ++b) {
    const float* xb = x + b * h * w * c;
    for (int64_t oy = 0; oy < oh; ++oy) {
      const CubicTaps ty = bicubic_taps(oy, sy, h);
      const float* rows[4];
      for (int j = 0; j < 4; ++j) rows[j] = xb + ty.index[j] * w * c;
      for (int64_t ox = 0; ox < ow; ++ox, y += c) {
        const CubicTaps tx = bicubic_taps(ox, sx, w);
        for (int64_t k = 0; k < c; ++k) {
          // TF interpolates each of the four columns vertically first, then across.
          float col[4];
          for (int i = 0; i < 4; ++i) {
            const int64_t p = tx.index[i] * c + k;
            col[i] = ty.weight[0] * rows[0][p] + ty.weight[1] * rows[1][p] + ty.weight[2] * rows[2][p] +
                     ty.weight[3] * rows[3][p];
          }
          y[k] =
              tx.weight[0] * col[0] + tx.weight[1] * col[1] + tx.weight[2] * col[2] + tx.weight[3] * col[3];
        }
      }
    }
  }
}

}  // namespace kerascpp::kernels
