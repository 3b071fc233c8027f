// Fast data movement for any dtype: elements are opaque blocks of elem_size bytes (1, 2, 4 or 8).
//
// Same contracts as ref/ref.h; tests/cpp/kernels/movement_test.cpp holds the two against each other.
//
//   // y: (3, 2) = x: (2, 3) transposed
//   int64_t shape[] = {2, 3}; int perm[] = {1, 0};
//   kernels::transpose(x, y, sizeof(float), shape, perm, 2);
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kinds.h"

namespace kerascpp::kernels {

// rank <= kMaxRank.
void transpose(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int* perm, int rank);
// xs[i]: (outer, axis_dims[i], inner) -> y: (outer, sum(axis_dims), inner)
void concatenate(const void* const* xs, const int64_t* axis_dims, int count, void* y, size_t elem_size,
                 int64_t outer, int64_t inner);
// y: (in_shape[d] * reps[d]...): x repeated reps[d] times along each d.
void tile(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* reps, int rank);

}  // namespace kerascpp::kernels
