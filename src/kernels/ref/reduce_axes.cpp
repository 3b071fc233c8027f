// Reference max / mean along the middle axis of (outer, axis, inner).
#include <limits>

#include "kernels/ref/spatial.h"

namespace kerascpp::kernels::ref {

void reduce_max(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t a = 0; a < axis; ++a) {
        const float v = x[(o * axis + a) * inner + i];
        if (v > m) m = v;
      }
      y[o * inner + i] = m;
    }
}

void reduce_mean(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double s = 0.0;
      for (int64_t a = 0; a < axis; ++a) s += x[(o * axis + a) * inner + i];
      y[o * inner + i] = static_cast<float>(s / static_cast<double>(axis));
    }
}

}  // namespace kerascpp::kernels::ref
