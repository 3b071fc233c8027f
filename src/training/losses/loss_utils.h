// Helpers shared by the loss files: Keras's squeeze/expand rule, clipping and reductions composed
// from the ops in ops/ops.h, so that a tape records every step of a loss on y_pred.
//
//   Aligned a = align("MeanSquaredError", y_true, y_pred);       // keras squeeze_or_expand_to_same_rank
//   Tensor d = sub(a.y_pred, a.y_true);
//   return mean_last(mul(d, d), a);                                // (batch, ...) per-sample losses
#pragma once

#include <string>

#include "kerascpp/losses.h"
#include "ops/ops.h"

namespace kerascpp::losses::detail {

// backend.epsilon() in Keras.
constexpr float kEpsilon = 1e-7f;
// 1 - epsilon as Keras computes it: in double, then rounded to float32 by the tensor.
constexpr float kOneMinusEpsilon = static_cast<float>(1.0 - 1e-7);

Tensor scalar(float v);                  // a rank-0 float32 constant
Tensor as_float(const Tensor& t, const std::string& who, const char* what);  // float32 (a copy if converted)

inline Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::add, a, b); }
inline Tensor sub(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::subtract, a, b); }
inline Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::multiply, a, b); }
inline Tensor div(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::divide, a, b); }
inline Tensor maximum(const Tensor& a, float b) { return ops::binary(ops::BinaryOp::maximum, a, scalar(b)); }
inline Tensor minimum(const Tensor& a, float b) { return ops::binary(ops::BinaryOp::minimum, a, scalar(b)); }
inline Tensor clip(const Tensor& x, float lo, float hi) { return minimum(maximum(x, lo), hi); }

// y_true and y_pred after keras/src/losses/loss.py squeeze_or_expand_to_same_rank. Where Keras
// would expand a rank-1 y_pred to (batch, 1), y_true is squeezed instead and implicit_last is set:
// the loss then treats its last axis as that implicit axis of size 1 (reducing over it is the
// identity), which needs no reshape of y_pred. Both are float32 unless keep_true_dtype.
struct Aligned {
  Tensor y_true, y_pred;
  bool implicit_last = false;
};
Aligned align(const std::string& loss, const Tensor& y_true, const Tensor& y_pred, bool keep_true_dtype = false);
// ValueError naming the loss and both shapes unless they broadcast together.
void check_broadcast(const std::string& loss, const Tensor& y_true, const Tensor& y_pred);
// ValueError naming the loss and both shapes unless they are equal (the crossentropies).
void check_same_shape(const std::string& loss, const Tensor& y_true, const Tensor& y_pred);

// mean / sum / max over the last axis (the per-sample reduction of keras.losses functions); the
// identity when the axis is implicit.
Tensor mean_last(const Tensor& x, const Aligned& a, int axis = -1);
Tensor sum_last(const Tensor& x, const Aligned& a, int axis = -1);
Tensor max_last(const Tensor& x, const Aligned& a);
// Sum of every element (rank 0), by one op per axis.
Tensor sum_all(Tensor x);

// keras/src/losses/loss.py reduce_weighted_values (no masks: kerascpp's losses set none).
Tensor reduce_weighted_values(const std::string& loss, const Tensor& values, const Tensor& sample_weight,
                              Reduction reduction);

}  // namespace kerascpp::losses::detail
