// Helpers for the ops' backward functions (not ops themselves: they run with recording paused).
//
//   Tensor da = sum_to(dy, a.shape());          // undo numpy broadcasting
//   Tensor full = broadcast_to(mean, x.shape());
#pragma once

#include <vector>

#include "kerascpp/tensor.h"

namespace kerascpp::ops::detail {

// g summed over the dims that broadcasting added or stretched, so that it has `shape` (the shape of
// the operand before broadcasting).
Tensor sum_to(const Tensor& g, const Shape& shape);
// t broadcast (numpy rules) to `shape`, as a new tensor.
Tensor broadcast_to(const Tensor& t, const Shape& shape);
// A float32 tensor of `shape` filled with v.
Tensor filled(const Shape& shape, float v);
// The scalar v as a rank-0 float32 tensor.
Tensor scalar(float v);
// The sum over `axes` (any order), with the reduced dims kept as 1.
Tensor sum_axes(const Tensor& x, const std::vector<int>& axes);
// The gradient of y = x / sqrt(max(sum(x^2 over axes), epsilon)): (dy - y * sum(dy * y)) / norm
// where the sum of squares is above epsilon, dy / norm where epsilon wins (the norm is constant there).
Tensor l2_normalize_grad(const Tensor& x, const Tensor& y, const Tensor& dy, const std::vector<int>& axes,
                         float epsilon);
// Elementwise a * b and a + b, broadcasting (shorthands for backward formulas).
Tensor mul(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);

}  // namespace kerascpp::ops::detail
