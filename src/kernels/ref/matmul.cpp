// Reference matmul: the textbook triple loop, accumulated in double.
#include "kernels/ref/ref.h"

namespace kerascpp::kernels::ref {

void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) acc += double(a[i * k + p]) * double(b[p * n + j]);
      c[i * n + j] = static_cast<float>(acc);
    }
  }
}

}  // namespace kerascpp::kernels::ref
