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

}  // namespace kerascpp::kernels
