// Reference kernels: scalar, obviously correct, slow. Every fast kernel in src/kernels is tested
// against the reference of the same name; ops never call these except where no fast kernel exists.
//
// Like all kernels they take pointers and sizes, never allocate, never throw, never validate: the
// op that calls them has checked shapes. Tensors are contiguous and row-major. Arithmetic is done in
// double and rounded once to float, so a reference is at least as accurate as any fast kernel.
//
//   ref::matmul(a, b, c, m, n, k);   // c: (m, n) = a: (m, k) @ b: (k, n)
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/conv.h"
#include "kernels/kinds.h"

namespace kerascpp::kernels::ref {

// y = conv(x, kernel) + bias, or its transpose, for any ConvGeometry (kernels/conv.h); bias may be null.
void conv(const ConvGeometry& g, const float* x, const float* kernel, const float* bias, float* y);
// Max or average pooling; padded cells are never part of a window's max or count.
void pool(const PoolGeometry& g, const float* x, float* y);
// Gradients of conv for the output gradient dy: dx, dkernel (Keras layout) and dbias, each skipped
// when null. x is the op's input; kernel its kernel.
void conv_grad(const ConvGeometry& g, const float* x, const float* kernel, const float* dy, float* dx, float* dkernel,
               float* dbias);
// dx of pool for dy (dx is overwritten).
void pool_grad(const PoolGeometry& g, const float* x, const float* dy, float* dx);

// c: (m, n) = a: (m, k) @ b: (k, n). k == 0 gives zeros.
void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);

// y = op(a, b) over an output of `rank` dims `shape`; a_strides / b_strides are in elements, 0 on the
// dims where that operand is broadcast. rank 0 is a scalar.
void binary(Binary op, const float* a, const int64_t* a_strides, const float* b, const int64_t* b_strides,
            float* y, const int64_t* shape, int rank);
// The scalar definition of each binary op, in double.
double binary_scalar(Binary op, double a, double b);

// y[i] = op(x[i]) for n elements; see kinds.h for alpha.
void unary(Unary op, const float* x, float* y, int64_t n, float alpha);
// The scalar definition of each unary op, in double.
double unary_scalar(Unary op, double x, double alpha);
// keras.activations.relu with all its arguments; max_value = +inf means None (no clipping).
void relu(const float* x, float* y, int64_t n, float negative_slope, float max_value, float threshold);
double relu_scalar(double x, double negative_slope, double max_value, double threshold);
// y = x * scale + offset
void scale_shift(const float* x, float* y, int64_t n, float scale, float offset);

// x, y: (outer, axis, inner); the op runs along the middle dimension.
void softmax(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner);
void log_softmax(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner);
// x: (outer, axis, inner) -> y: (outer, inner)
void sum(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner);
// y = x / sqrt(max(sum(x^2 along axis), epsilon)); x, y: (outer, axis, inner)
void l2_normalize(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner, float epsilon);

// Data movement works on elements of elem_size bytes (any dtype).
// x: in_shape (rank dims) -> y: (in_shape[perm[0]], ..., in_shape[perm[rank-1]])
void transpose(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int* perm, int rank);
// xs[i]: (outer, axis_dims[i], inner) -> y: (outer, sum(axis_dims), inner)
void concatenate(const void* const* xs, const int64_t* axis_dims, int count, void* y, size_t elem_size,
                 int64_t outer, int64_t inner);
// x: in_shape -> y: (in_shape[d] * reps[d] for each d); y[i...] = x[i % in_shape ...]
void tile(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* reps, int rank);

}  // namespace kerascpp::kernels::ref
