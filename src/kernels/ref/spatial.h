// Reference kernels of the spatial layers' ops: pad, slice, repeat, resize, and max / mean along
// one axis. Scalar, one output element at a time from its index formula; the fast kernels in
// pad_slice.h, resize.h and reduce_axes.h are tested against these. Same rules as ref/ref.h: pointers
// and sizes, no allocation, no throwing, no validation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kerascpp::kernels::ref {

// See kernels/pad_slice.h for the shapes.
void pad(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* before,
         const int64_t* after, int rank, const void* fill);
void slice(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* begin,
           const int64_t* size, int rank);
void repeat(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* repeats,
            int rank);

// tf.image.resize of x: (n, h, w, c) -> y: (n, oh, ow, c) with TF 2 semantics (half-pixel centres, no
// antialias). method: 0 nearest, 1 bilinear, 2 bicubic (Keys, a = -0.5, out-of-image taps dropped and
// the weights renormalised), as tensorflow/core/kernels/image/resize_*_op.cc. Sample positions are
// computed in float exactly as TF does (they decide which pixel is picked); blending is in double.
void resize(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh, int64_t ow,
            int method);

// x: (outer, axis, inner) -> y: (outer, inner). max of an empty axis is -inf, mean of one is NaN.
void reduce_max(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner);
void reduce_mean(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner);

}  // namespace kerascpp::kernels::ref
