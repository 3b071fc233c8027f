// Normalisation kernels: batch normalisation at inference (a per-channel affine map), layer
// normalisation over one block of axes, group normalisation; fast versions here, scalar references
// in kernels::ref (src/kernels/ref/normalization.cpp), tested against each other.
//
// Like every kernel they take pointers and sizes, never allocate, never throw, never validate.
// Tensors are contiguous and row-major; the op (src/ops/normalization.cpp) views x as the shapes
// below. gamma / beta may be null: no scale (1) / no offset (0). Statistics are accumulated in double.
//
//   batch_normalization(x, y, scale, shift, n * h * w, c, 1);   // channels_last (n, h, w, c)
//   batch_normalization(x, y, scale, shift, n, c, h * w);       // channels_first (n, c, h, w)
#pragma once

#include <cstdint>

namespace kerascpp::kernels {

// x, y: (outer, channels, inner); y = x * scale[c] + shift[c]. The op folds mean, variance, gamma,
// beta and epsilon into scale and shift the way tf.nn.batch_normalization does.
void batch_normalization(const float* x, float* y, const float* scale, const float* shift, int64_t outer,
                         int64_t channels, int64_t inner);
// The scale and shift of batch_normalization from a layer's statistics, folded in float as
// tf.nn.batch_normalization folds them: scale = 1 / sqrt(variance + epsilon) * gamma, shift = beta -
// mean * scale (gamma / beta null: 1 / 0). The op and inference plans share it, so both round alike.
void batch_normalization_fold(const float* mean, const float* variance, const float* gamma, const float* beta,
                              float epsilon, int64_t channels, float* scale, float* shift);
// A per-channel y * scale + shift after a layer folded into its weights, whose last axis is the output
// channel (a Dense kernel (k, channels), a convolution's (*k, in / groups, channels)):
// kernel_out = kernel * scale, bias_out = bias * scale + shift (bias null: 0). size: the kernel's
// elements, a multiple of channels.
void fold_into_weights(const float* kernel, const float* bias, const float* scale, const float* shift, int64_t size,
                       int64_t channels, float* kernel_out, float* bias_out);

// x, y: (outer, n, inner). For each (o, i): mean m and (biased) variance v over the n elements;
//   y = (x - m) / sqrt(v + epsilon) * gamma[k] + beta[k]          (k: position along n)
// rms_scaling (Keras 3 LayerNormalization(rms_scaling=True)) keeps the centred variance but neither
// subtracts the mean nor adds beta: y = x / sqrt(v + epsilon) * gamma[k].
void layer_normalization(const float* x, float* y, const float* gamma, const float* beta, int64_t outer,
                         int64_t n, int64_t inner, float epsilon, bool rms_scaling);

// x, y: (outer, pre, groups, group_size, post), channel c = g * group_size + j. For each (o, g):
// mean and variance over (pre, j, post); y = (x - m) / sqrt(v + epsilon) * gamma[c] + beta[c].
void group_normalization(const float* x, float* y, const float* gamma, const float* beta, int64_t outer,
                         int64_t pre, int64_t groups, int64_t group_size, int64_t post, float epsilon);

namespace ref {
// Same contracts, scalar loops in double.
void batch_normalization(const float* x, float* y, const float* scale, const float* shift, int64_t outer,
                         int64_t channels, int64_t inner);
void layer_normalization(const float* x, float* y, const float* gamma, const float* beta, int64_t outer,
                         int64_t n, int64_t inner, float epsilon, bool rms_scaling);
void group_normalization(const float* x, float* y, const float* gamma, const float* beta, int64_t outer,
                         int64_t pre, int64_t groups, int64_t group_size, int64_t post, float epsilon);
}  // namespace ref

}  // namespace kerascpp::kernels
