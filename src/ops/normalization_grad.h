// Backward passes of the normalisation ops (normalization_grad.cpp); each returns one gradient per
// op input, in the op's argument order (undefined for absent gamma / beta).
#pragma once

#include <vector>

#include "ops/tape.h"

namespace kerascpp::ops::detail {

// layer_normalization (and l2-free rms_scaling) over `axes` (sorted): grads for x, gamma, beta.
Grads normalize_over_axes_grad(const Tensor& x, const Tensor& gamma, const Tensor& beta, const std::vector<int>& axes,
                               float epsilon, bool rms, const Tensor& dy);
// group_normalization: grads for x, gamma, beta.
Grads group_normalization_grad(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t groups, int axis,
                               float epsilon, const Tensor& dy);
// batch_normalization with given statistics: grads for x, mean, variance, offset, scale.
Grads batch_normalization_grad(const Tensor& x, const Tensor& mean, const Tensor& variance, const Tensor& offset,
                               const Tensor& scale, int axis, float epsilon, const Tensor& dy);

}  // namespace kerascpp::ops::detail
