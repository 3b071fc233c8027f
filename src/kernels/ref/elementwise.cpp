// Reference binary ops with broadcasting, and scale_shift.
#include <algorithm>

#include "kernels/ref/ref.h"

namespace kerascpp::kernels::ref {

double binary_scalar(Binary op, double a, double b) {
  switch (op) {
    case Binary::add:
      return a + b;
    case Binary::subtract:
      return a - b;
    case Binary::multiply:
      return a * b;
    case Binary::divide:
      return a / b;
    // NaN propagates through maximum / minimum, as in numpy and TF.
    case Binary::maximum:
      return (a != a || b != b) ? a + b : std::max(a, b);
    case Binary::minimum:
      return (a != a || b != b) ? a + b : std::min(a, b);
    case Binary::prelu:
      return std::max(a, 0.0) + b * std::min(a, 0.0);
  }
  return 0.0;
}

void binary(Binary op, const float* a, const int64_t* a_strides, const float* b, const int64_t* b_strides,
            float* y, const int64_t* shape, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= shape[d];
  for (int64_t i = 0; i < n; ++i) {
    // Unravel the output index i, last dimension fastest, and map it into each operand.
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t idx = rest % shape[d];
      rest /= shape[d];
      ia += idx * a_strides[d];
      ib += idx * b_strides[d];
    }
    y[i] = static_cast<float>(binary_scalar(op, a[ia], b[ib]));
  }
}

void scale_shift(const float* x, float* y, int64_t n, float scale, float offset) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(double(x[i]) * scale + offset);
}

}  // namespace kerascpp::kernels::ref
