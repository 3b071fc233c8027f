// The adjoints of the tf.image.resize kernels (resize.h): every input pixel receives dy times the
// weight with which the forward pass read it. dx is overwritten. Same taps as the forward
// (resize_taps.h), so the pair is exact transposes of each other.
#include "kernels/resize.h"
#include "kernels/resize_taps.h"

#include <algorithm>

namespace kerascpp::kernels {

namespace {
// One weighted tap along each axis: dx[iy, ix] += wy * wx * dy.
struct Tap {
  int64_t index;
  float weight;
};
template <typename Taps>
void scatter(const float* dy, float* dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh, int64_t ow,
             Taps taps) {
  std::fill(dx, dx + n * h * w * c, 0.f);
  const float sy = resize_scale(h, oh), sx = resize_scale(w, ow);
  Tap ty[4], tx[4];
  for (int64_t b = 0; b < n; ++b) {
    float* xb = dx + b * h * w * c;
    for (int64_t oy = 0; oy < oh; ++oy) {
      const int ny = taps(oy, sy, h, ty);
      for (int64_t ox = 0; ox < ow; ++ox, dy += c) {
        const int nx = taps(ox, sx, w, tx);
        for (int i = 0; i < ny; ++i)
          for (int j = 0; j < nx; ++j) {
            const float wgt = ty[i].weight * tx[j].weight;
            float* p = xb + (ty[i].index * w + tx[j].index) * c;
            for (int64_t k = 0; k < c; ++k) p[k] += wgt * dy[k];
          }
      }
    }
  }
}
}  // namespace

void resize_grad(int method, const float* dy, float* dx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh,
                 int64_t ow) {
  if (method == 0) {
    scatter(dy, dx, n, h, w, c, oh, ow, [](int64_t o, float s, int64_t in, Tap* t) {
      t[0] = {nearest_tap(o, s, in), 1.f};
      return 1;
    });
  } else if (method == 1) {
    scatter(dy, dx, n, h, w, c, oh, ow, [](int64_t o, float s, int64_t in, Tap* t) {
      const LinearTaps l = bilinear_taps(o, s, in);
      t[0] = {l.lower, 1.f - l.lerp};
      t[1] = {l.upper, l.lerp};
      return 2;
    });
  } else {
    scatter(dy, dx, n, h, w, c, oh, ow, [](int64_t o, float s, int64_t in, Tap* t) {
      const CubicTaps q = bicubic_taps(o, s, in);
      for (int k = 0; k < 4; ++k) t[k] = {q.index[k], q.weight[k]};
      return 4;
    });
  }
}

}  // namespace kerascpp::kernels
