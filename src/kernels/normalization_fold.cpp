#include <cmath>

#include "kernels/normalization.h"

namespace kerascpp::kernels {

void batch_normalization_fold(const float* mean, const float* variance, const float* gamma, const float* beta,
                              float epsilon, int64_t channels, float* scale, float* shift) {
  for (int64_t k = 0; k < channels; ++k) {
    float i = 1.f / std::sqrt(variance[k] + epsilon);
    if (gamma) i *= gamma[k];
    scale[k] = i;
    shift[k] = (beta ? beta[k] : 0.f) - mean[k] * i;
  }
}

void fold_into_weights(const float* kernel, const float* bias, const float* scale, const float* shift, int64_t size,
                       int64_t channels, float* kernel_out, float* bias_out) {
  for (int64_t i = 0; i < size; i += channels)
    for (int64_t c = 0; c < channels; ++c) kernel_out[i + c] = kernel[i + c] * scale[c];
  for (int64_t c = 0; c < channels; ++c) bias_out[c] = (bias ? bias[c] : 0.f) * scale[c] + shift[c];
}

}  // namespace kerascpp::kernels
