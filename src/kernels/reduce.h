// Fast reductions and normalisations along the middle axis of x: (outer, axis, inner): softmax,
// log_softmax, sum, l2_normalize.
//
// Same contracts as ref/ref.h. When inner > 1 (softmax over a non-last axis) the loops run along
// inner, which is contiguous, in chunks held on the stack: kernels never allocate.
#pragma once

#include <cstdint>

namespace kerascpp::kernels {

void softmax(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner);
void log_softmax(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner);
// x: (outer, axis, inner) -> y: (outer, inner), accumulated in double.
void sum(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner);
// y = x / sqrt(max(sum(x^2 along axis), epsilon))
void l2_normalize(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner, float epsilon);

}  // namespace kerascpp::kernels
