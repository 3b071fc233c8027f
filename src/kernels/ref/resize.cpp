// Reference resize: one output element at a time, blended in double from the taps TF would use.
#include "kernels/ref/spatial.h"
#include "kernels/resize_taps.h"

namespace kerascpp::kernels::ref {

void resize(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh, int64_t ow,
            int method) {
  const float sy = resize_scale(h, oh), sx = resize_scale(w, ow);
  auto at = [&](int64_t b, int64_t iy, int64_t ix, int64_t k) -> double {
    return x[((b * h + iy) * w + ix) * c + k];
  };
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox)
        for (int64_t k = 0; k < c; ++k) {
          double v = 0.0;
          if (method == 0) {
            v = at(b, nearest_tap(oy, sy, h), nearest_tap(ox, sx, w), k);
          } else if (method == 1) {
            const LinearTaps ty = bilinear_taps(oy, sy, h), tx = bilinear_taps(ox, sx, w);
            const double top =
                at(b, ty.lower, tx.lower, k) * (1.0 - tx.lerp) + at(b, ty.lower, tx.upper, k) * tx.lerp;
            const double bot =
                at(b, ty.upper, tx.lower, k) * (1.0 - tx.lerp) + at(b, ty.upper, tx.upper, k) * tx.lerp;
            v = top * (1.0 - ty.lerp) + bot * ty.lerp;
          } else {
            const CubicTaps ty = bicubic_taps(oy, sy, h), tx = bicubic_taps(ox, sx, w);
            for (int j = 0; j < 4; ++j)
              for (int i = 0; i < 4; ++i)
                v += double(ty.weight[j]) * double(tx.weight[i]) * at(b, ty.index[j], tx.index[i], k);
          }
          y[((b * oh + oy) * ow + ox) * c + k] = static_cast<float>(v);
        }
}

}  // namespace kerascpp::kernels::ref
