// Reference softmax and log_softmax along the middle axis of x: (outer, axis, inner), in double.
// Both subtract the maximum first, so large logits never overflow.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/ref/ref.h"

namespace kerascpp::kernels::ref {
namespace {

template <bool kLog>
void softmax_impl(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* xs = x + o * axis * inner + i;
      float* ys = y + o * axis * inner + i;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t a = 0; a < axis; ++a) mx = std::max(mx, double(xs[a * inner]));
      double total = 0.0;
      for (int64_t a = 0; a < axis; ++a) total += std::exp(double(xs[a * inner]) - mx);
      for (int64_t a = 0; a < axis; ++a) {
        double shifted = double(xs[a * inner]) - mx;
        ys[a * inner] = static_cast<float>(kLog ? shifted - std::log(total) : std::exp(shifted) / total);
      }
    }
  }
}

}  // namespace

void softmax(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  softmax_impl<false>(x, y, outer, axis, inner);
}

void log_softmax(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  softmax_impl<true>(x, y, outer, axis, inner);
}

}  // namespace kerascpp::kernels::ref
