// Fast elementwise kernels: binary ops with broadcasting, activations, relu, scale_shift.
//
// Same contracts as the reference kernels of the same names in ref/ref.h (float32 compute here,
// double there); tests/cpp/kernels/elementwise_test.cpp holds the two against each other.
//
//   // y: (4, 2, 3) = a: (4, 1, 3) + b: (2, 3)
//   int64_t shape[] = {4, 2, 3}, as[] = {3, 0, 1}, bs[] = {0, 3, 1};
//   kernels::binary(kernels::Binary::add, a, as, b, bs, y, shape, 3);
#pragma once

#include <cstdint>

#include "kernels/kinds.h"

namespace kerascpp::kernels {

// y = op(a, b) over an output of `rank` dims; a_strides / b_strides in elements, 0 where broadcast.
// Fastest when the caller has merged dimensions that are contiguous in all three (see ops).
void binary(Binary op, const float* a, const int64_t* a_strides, const float* b, const int64_t* b_strides,
            float* y, const int64_t* shape, int rank);
void unary(Unary op, const float* x, float* y, int64_t n, float alpha);
// max_value = +inf means no clipping (Keras max_value=None).
void relu(const float* x, float* y, int64_t n, float negative_slope, float max_value, float threshold);
// dx = dy * f'(x) for unary(op); y is the forward output (some derivatives are cheaper from it).
void unary_grad(Unary op, const float* x, const float* y, const float* dy, float* dx, int64_t n, float alpha);
// dx = dy * relu'(x) for relu(x, negative_slope, max_value, threshold).
void relu_grad(const float* x, const float* dy, float* dx, int64_t n, float negative_slope, float max_value,
               float threshold);
void scale_shift(const float* x, float* y, int64_t n, float scale, float offset);

}  // namespace kerascpp::kernels
