// Reference reductions along the middle axis of x: (outer, axis, inner), accumulated in double.
#include <algorithm>
#include <cmath>

#include "kernels/ref/ref.h"

namespace kerascpp::kernels::ref {

void sum(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double total = 0.0;
      for (int64_t a = 0; a < axis; ++a) total += x[(o * axis + a) * inner + i];
      y[o * inner + i] = static_cast<float>(total);
    }
  }
}

void l2_normalize(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner, float epsilon) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double squares = 0.0;
      for (int64_t a = 0; a < axis; ++a) {
        double v = x[(o * axis + a) * inner + i];
        squares += v * v;
      }
      double norm = std::sqrt(std::max(squares, double(epsilon)));
      for (int64_t a = 0; a < axis; ++a) {
        int64_t idx = (o * axis + a) * inner + i;
        y[idx] = static_cast<float>(x[idx] / norm);
      }
    }
  }
}

}  // namespace kerascpp::kernels::ref
