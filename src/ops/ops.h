// The primitive ops of kerascpp: the one list that names them all.
//
// Each op checks its arguments (shape inference; ValueError with Keras-style messages), allocates
// its output and calls a kernel from src/kernels. Ops never change their inputs. Layers are built
// from these. Each op records its backward on the active gradient tape (ops/tape.h); the signatures
// are functional so that the tape can keep (op, inputs, output).
//
//   Tensor y = ops::bias_add(ops::matmul(x, kernel), bias);
//   y = ops::unary(ops::UnaryOp::relu, y);
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kerascpp/tensor.h"
#include "kernels/kinds.h"

namespace kerascpp::ops {

// ---- shape inference
// numpy broadcasting of two shapes; ValueError naming both when incompatible.
Shape broadcast_shape(const Shape& a, const Shape& b);
// Normalise a possibly negative axis for a tensor of `rank`; ValueError when out of range.
int normalize_axis(int axis, int rank);

// ---- linear algebra (float32)
// a: (..., m, k), b: (k, n) -> (..., m, n)
Tensor matmul(const Tensor& a, const Tensor& b);
// a: (batch, m, k), b: (batch, k, n) -> (batch, m, n)
Tensor batch_matmul(const Tensor& a, const Tensor& b);
// numpy.einsum of two float32 operands ("abc,cd->abd", "aecd,abcd->acbe"): distinct letters per
// operand, no ellipsis (expand it first). One (batched) matrix product between transposes.
Tensor einsum(std::string_view equation, const Tensor& a, const Tensor& b);
// x: (..., c), bias: (c,) -> x + bias
Tensor bias_add(const Tensor& x, const Tensor& bias);

// ---- elementwise (float32)
// The ops are the kernels' (one list: src/kernels/binary_list.inc). numpy broadcasting; prelu also
// through ops::prelu, which checks that alpha does not widen x.
using BinaryOp = kernels::Binary;
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
using kernels::binary_name;

// Every Keras activation that is elementwise. Formulas follow keras/src/activations/activations.py
// (Keras 3); hard_sigmoid_k2 is Keras 2's clip(0.2 x + 0.5, 0, 1), which Keras 3 changed to
// relu6(x + 3) / 6.
// The ops are the kernels' (one list: src/kernels/unary_list.inc).
using UnaryOp = kernels::Unary;
// alpha is the slope of leaky_relu and the scale of elu; unused otherwise. NaN (the default) means the
// Keras default of the activation: 0.2 for leaky_relu, 1.0 for elu, so that an activation looked up
// by name (unary_from_name) computes what Keras computes.
Tensor unary(UnaryOp op, const Tensor& x, float alpha = std::numeric_limits<float>::quiet_NaN());
// UnaryOp for a Keras activation name ("relu", "swish", "gelu", ...); false when it is not elementwise
// (softmax, log_softmax) or unknown. "hard_sigmoid" is the Keras 3 formula: readers of Keras 2 files
// pick hard_sigmoid_k2 themselves.
bool unary_from_name(std::string_view name, UnaryOp* op);
// The enumerator's name ("silu", "gelu_approximate", "hard_sigmoid_k2"...), for messages and configs.
using kernels::unary_name;
// The alpha unary() uses when given none: 1 for elu, 0.2 for leaky_relu (Keras's defaults), else 0.
float default_alpha(UnaryOp op);

// Keras ReLU layer / keras.activations.relu: max_value may be +inf, values below threshold become
// negative_slope * (x - threshold).
Tensor relu(const Tensor& x, float negative_slope = 0.f,
            float max_value = std::numeric_limits<float>::infinity(), float threshold = 0.f);
// max(x, 0) + alpha * min(x, 0), alpha broadcast against x.
Tensor prelu(const Tensor& x, const Tensor& alpha);
// x * scale + offset with scalars (Rescaling).
Tensor scale_shift(const Tensor& x, float scale, float offset);

// ---- reductions and normalisations along one axis (float32)
Tensor softmax(const Tensor& x, int axis = -1);
Tensor log_softmax(const Tensor& x, int axis = -1);
// x / sqrt(max(sum(x^2, axis), epsilon)), as keras.utils.normalize / Dot(normalize=True)
Tensor l2_normalize(const Tensor& x, int axis, float epsilon = 1e-12f);
Tensor sum(const Tensor& x, int axis, bool keepdims = false);

// ---- normalisation (float32; src/ops/normalization.cpp)
// keras.ops.batch_normalization with given statistics (inference): along `axis`,
// (x - mean) / sqrt(variance + epsilon) * scale + offset. mean, variance: (x.shape[axis],);
// offset / scale: the same, or undefined (Tensor()) for none.
Tensor batch_normalization(const Tensor& x, const Tensor& mean, const Tensor& variance, const Tensor& offset,
                           const Tensor& scale, int axis, float epsilon);
// keras.ops.layer_normalization: mean and variance over `axes` (any set), per position of the
// others. gamma / beta: (product of the dims of the axes,) in row-major order of the sorted axes, or
// undefined. rms_scaling: Keras 3's flag, x / sqrt(variance + epsilon) * gamma (no centring, no beta).
Tensor layer_normalization(const Tensor& x, const Tensor& gamma, const Tensor& beta, const std::vector<int>& axes,
                           float epsilon, bool rms_scaling = false);
// keras.layers.GroupNormalization: channels along `axis` (not 0) split into `groups` consecutive
// groups; statistics per (batch, group) over every other axis. gamma / beta: (channels,) or undefined.
Tensor group_normalization(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t groups, int axis,
                           float epsilon);
// l2_normalize over several axes at once: x / sqrt(max(sum(x^2 over axes), epsilon)).
Tensor l2_normalize(const Tensor& x, const std::vector<int>& axes, float epsilon = 1e-12f);

// ---- convolution and pooling (float32), 1 to 3 spatial dims, Keras layouts (see kernels/conv.h)
class PlanCache;  // ops/plan_cache.h
enum class Padding { valid, same, causal };
// "valid" / "same" / "causal" (any case); ValueError naming `who` otherwise.
Padding padding_from_name(std::string_view name, const std::string& who);
struct ConvOptions {
  std::vector<int64_t> strides;        // per spatial dim
  std::vector<int64_t> dilation_rate;  // per spatial dim
  Padding padding = Padding::valid;
  bool channels_first = false;
  int64_t groups = 1;
  std::vector<int64_t> output_padding;  // transposed only; empty means None
};
// Keras's output size along one spatial dim (keras/src/ops/operation_utils.py); may be <= 0, which
// the ops reject.
int64_t conv_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, Padding p);
int64_t conv_transpose_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, Padding p,
                                     int64_t output_padding /* -1: None */);
// x: (batch, *spatial, in) or channels_first (batch, in, *spatial); kernel: (*k, in / groups, out);
// bias: (out,) or undefined. Depthwise convolution is groups = in with the kernel reshaped to
// (*k, 1, in * multiplier). plans: the calling layer's cache (nullptr: plan every call), keyed with
// weights_version (Variable::version of kernel and bias).
Tensor conv(const Tensor& x, const Tensor& kernel, const Tensor& bias, const ConvOptions& o,
            PlanCache* plans = nullptr, uint64_t weights_version = 0);
// Keras Conv*DTranspose. kernel: (*k, out, in).
Tensor conv_transpose(const Tensor& x, const Tensor& kernel, const Tensor& bias, const ConvOptions& o,
                      PlanCache* plans = nullptr, uint64_t weights_version = 0);
enum class PoolMode { max, average };
// Max / average pooling; average divides by the cells inside the input (TensorFlow's rule).
Tensor pool(const Tensor& x, PoolMode mode, const std::vector<int64_t>& pool_size, const std::vector<int64_t>& strides,
            Padding padding, bool channels_first, PlanCache* plans = nullptr);

// ---- padding, cropping, resizing, global pooling (src/ops/pad_slice.cpp, resize.cpp, reduce_axes.cpp)
// numpy.pad with mode "constant": pads[d] = {before, after} (>= 0) for every dim of x;
// x: (d0, ...) -> (before0 + d0 + after0, ...). Any dtype; value != 0 needs float32.
Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& pads, float value = 0.f);
// keras.ops.slice: a copy of the window x[begin[d] : begin[d] + size[d]] along every dim. Any dtype.
Tensor slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size);
// numpy.repeat along every axis at once: y[i] = x[i[d] / repeats[d]]; (2, 3) with {2, 1} -> (4, 3),
// rows doubled in place (unlike tile). Any dtype.
Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats);
// tf.image.resize with TF 2 semantics (half-pixel centres, antialias=False), float32:
// x: (batch, height, width, channels), or (batch, channels, height, width) when channels_first.
enum class ResizeMethod { nearest, bilinear, bicubic };
Tensor resize(const Tensor& x, int64_t height, int64_t width, ResizeMethod method, bool channels_first = false);
// max / mean over `axes` (negative allowed, any order, no repeats), float32; keepdims keeps them as 1.
Tensor reduce_max(const Tensor& x, const std::vector<int>& axes, bool keepdims = false);
Tensor reduce_mean(const Tensor& x, const std::vector<int>& axes, bool keepdims = false);
// tf.nn.moments' variance: the mean over `axes` of (x - mean)^2, where mean is reduce_mean(x, axes)'s
// (with or without keepdims; another shape is a ValueError). Under a tape, mean is held constant (TensorFlow's stop_gradient:
// its gradient there is zero), so the backward is one expression, 2 * (dvar / n) * (x - mean), where
// subtract, square and reduce_mean recorded apart took five passes over x's size and kept x - mean.
Tensor variance(const Tensor& x, const Tensor& mean, const std::vector<int>& axes);

// ---- data movement (any dtype)
Tensor concatenate(const std::vector<Tensor>& xs, int axis);
Tensor transpose(const Tensor& x, const std::vector<int>& perm);
// Repeats every slice along `axis` `reps` times consecutively is NOT this op: tile repeats the
// whole tensor: tile((b, 1, f), {1, n, 1}) -> (b, n, f).
Tensor tile(const Tensor& x, const std::vector<int64_t>& reps);
// Masks and booleans as float32 1 / 0 (src/ops/compare.cpp; no gradient): a != b with numpy
// broadcasting (any dtype, compared as float32); any(x != 0) over `axes` (all when empty); a mask of
// any dtype (bool, int, float) as 1 where it is nonzero.
Tensor not_equal(const Tensor& a, const Tensor& b);
Tensor any(const Tensor& x, const std::vector<int>& axes, bool keepdims = false);
Tensor as_mask(const Tensor& t);
// where(mask, a, b): a where the mask is nonzero, else b, exactly (tf.where); a and b of one shape, the
// mask broadcast to it (an RNN's (batch, 1) step mask over (batch, units)). Gradients to a and b.
Tensor where(const Tensor& mask, const Tensor& a, const Tensor& b);
// One LSTM step (keras.layers.LSTMCell, src/ops/recurrent.cpp) as one op: z = xp + (h * rm) @ u with
// xp (batch, 4 units) the step's input projection and rm recurrent dropout's mask (undefined for
// none); gates i, f, g, o; c' = f * c + i * act(g), h' = o * act(c'). Returns [h' | c'] (batch,
// 2 units). act / ract: elementwise activations (Keras's default alphas).
Tensor lstm_step(const Tensor& xp, const Tensor& h, const Tensor& c, const Tensor& u, const Tensor& rm, UnaryOp act,
                 UnaryOp ract);
// An LSTM layer's loop over time as one op (src/ops/lstm_sequence.cpp), for training: xp (batch, steps,
// 4 units) every step's input projection; h0, c0 (batch, units) the initial states; u, rm, act, ract
// as lstm_step; mask (batch, steps) float32, nonzero where a step counts, or undefined. Returns
// (batch, steps, 3 units): for each step s in processing order (from the last with go_backwards),
// [y_s | h_s | c_s], the step's output and the states after it; a masked step keeps the states and
// repeats the previous output (zeros with zero_output_for_mask; before the first step, zeros).
Tensor lstm_sequence(const Tensor& xp, const Tensor& h0, const Tensor& c0, const Tensor& u, const Tensor& rm,
                     const Tensor& mask, bool go_backwards, bool zero_output_for_mask, UnaryOp act, UnaryOp ract);
// A GRU layer's loop over time (reset_after=True) as one op (src/ops/gru_sequence.cpp), for training:
// xp (batch, steps, 3 units) every step's input projection with the input bias; h0 (batch, units); u
// (units, 3 units); rb the recurrent bias (3 units) or undefined; rm, mask, go_backwards,
// zero_output_for_mask as lstm_sequence. Returns (batch, steps, 2 units): [y_s | h_s] per step.
Tensor gru_sequence(const Tensor& xp, const Tensor& h0, const Tensor& u, const Tensor& rb, const Tensor& rm,
                    const Tensor& mask, bool go_backwards, bool zero_output_for_mask, UnaryOp act, UnaryOp ract);
// ---- elementwise ops given as scalar functions (src/ops/scalar_map.cpp): the math that op nodes
// (keras.ops calls, TFOpLambda) reach and no layer does: sin, floor, power, comparisons, ... float32,
// numpy broadcasting. A null derivative records no gradient (piecewise constant functions, booleans).
using ScalarFn = float (*)(float);
using ScalarGrad = float (*)(float x, float y);  // dy/dx at x, where y = f(x)
Tensor map_unary(const char* op, const Tensor& x, ScalarFn f, ScalarGrad df);
using ScalarFn2 = float (*)(float a, float b);
using ScalarGrad2 = float (*)(float a, float b, float y);  // d/da or d/db at (a, b), where y = f(a, b)
Tensor map_binary(const char* op, const Tensor& a, const Tensor& b, ScalarFn2 f, ScalarGrad2 da, ScalarGrad2 db);
// x[key] with numpy's basic indexing (src/ops/get_item.cpp): per entry an integer (drops the dim;
// negative counts from the end), a slice start:stop:step (numpy's defaults and clamping), a new axis
// (None) or one ellipsis; dims past the key are kept whole. ValueError for an index out of range, a
// zero step or too many indices. get_item_shape also takes unknown dims (-1), which stay unknown.
struct Index {
  enum Kind { integer, range, new_axis, ellipsis } kind = range;
  int64_t at = 0;  // for `integer`
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};
Shape get_item_shape(const Shape& x, const std::vector<Index>& key);
Tensor get_item(const Tensor& x, const std::vector<Index>& key);
// keras.ops.take(table, indices, axis=0): rows of `table` (float32, (n, ...)) picked by `indices`
// (float32 truncated toward zero as Keras casts to int32, int32 or int64) -> indices.shape + (...).
// ValueError naming the first index outside [0, n). The gradient adds dy's rows back into the table's.
Tensor take(const Tensor& table, const Tensor& indices);

}  // namespace kerascpp::ops
