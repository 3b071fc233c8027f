// Fast pad, slice and repeat for any dtype (elements are opaque blocks of elem_size bytes): the
// data movement of ZeroPadding, Cropping and UpSampling(nearest).
//
// Same contracts as ref/spatial.h; tests/cpp/kernels/pad_slice_test.cpp holds the two against each
// other. rank <= kMaxRank; every pointer array has `rank` entries.
//
//   // y: (1 + 2 + 1, 3) = x: (2, 3) with one row of `fill` above and below
//   int64_t shape[] = {2, 3}, before[] = {1, 0}, after[] = {1, 0};
//   kernels::pad(x, y, sizeof(float), shape, before, after, 2, &zero);
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kinds.h"

namespace kerascpp::kernels {

// x: in_shape -> y: (before[d] + in_shape[d] + after[d], ...); new cells hold the elem_size bytes at fill.
void pad(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* before,
         const int64_t* after, int rank, const void* fill);
// y: size = the window of x: in_shape starting at begin (begin[d] + size[d] <= in_shape[d]).
void slice(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* begin,
           const int64_t* size, int rank);
// numpy.repeat along every axis: y: (in_shape[d] * repeats[d], ...), y[i] = x[i[d] / repeats[d], ...].
void repeat(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* repeats,
            int rank);

}  // namespace kerascpp::kernels
