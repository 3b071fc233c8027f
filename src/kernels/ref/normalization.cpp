// Reference normalisation kernels: the formulas of kernels/normalization.h, one element at a time, in
// double.
#include <cmath>

#include "kernels/normalization.h"

namespace kerascpp::kernels::ref {

void batch_normalization(const float* x, float* y, const float* scale, const float* shift, int64_t outer,
                         int64_t channels, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t idx = (o * channels + c) * inner + i;
        y[idx] = static_cast<float>(double(x[idx]) * scale[c] + shift[c]);
      }
}

void layer_normalization(const float* x, float* y, const float* gamma, const float* beta, int64_t outer,
                         int64_t n, int64_t inner, float epsilon, bool rms_scaling) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return (o * n + k) * inner + i; };
      double mean = 0.0, var = 0.0;
      for (int64_t k = 0; k < n; ++k) mean += x[at(k)];
      mean /= double(n);
      for (int64_t k = 0; k < n; ++k) var += (x[at(k)] - mean) * (x[at(k)] - mean);
      var /= double(n);
      const double inv = 1.0 / std::sqrt(var + epsilon);
      for (int64_t k = 0; k < n; ++k) {
        const double g = gamma ? gamma[k] : 1.0;
        if (rms_scaling) {
          y[at(k)] = static_cast<float>(x[at(k)] * inv * g);
        } else {
          const double b = beta ? beta[k] : 0.0;
          y[at(k)] = static_cast<float>((x[at(k)] - mean) * inv * g + b);
        }
      }
    }
}

void group_normalization(const float* x, float* y, const float* gamma, const float* beta, int64_t outer,
                         int64_t pre, int64_t groups, int64_t group_size, int64_t post, float epsilon) {
  const double count = double(pre * group_size * post);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g < groups; ++g) {
      auto at = [&](int64_t p, int64_t j, int64_t q) {
        return (((o * pre + p) * groups + g) * group_size + j) * post + q;
      };
      double mean = 0.0, var = 0.0;
      for (int64_t p = 0; p < pre; ++p)
        for (int64_t j = 0; j < group_size; ++j)
          for (int64_t q = 0; q < post; ++q) mean += x[at(p, j, q)];
      mean /= count;
      for (int64_t p = 0; p < pre; ++p)
        for (int64_t j = 0; j < group_size; ++j)
          for (int64_t q = 0; q < post; ++q) var += (x[at(p, j, q)] - mean) * (x[at(p, j, q)] - mean);
      var /= count;
      const double inv = 1.0 / std::sqrt(var + epsilon);
      for (int64_t p = 0; p < pre; ++p)
        for (int64_t j = 0; j < group_size; ++j) {
          const int64_t c = g * group_size + j;
          const double gm = gamma ? gamma[c] : 1.0, bt = beta ? beta[c] : 0.0;
          for (int64_t q = 0; q < post; ++q)
            y[at(p, j, q)] = static_cast<float>((x[at(p, j, q)] - mean) * inv * gm + bt);
        }
    }
}

}  // namespace kerascpp::kernels::ref
