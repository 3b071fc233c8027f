// The primitive ops of kerascpp: the one list that names them all.
//
// Each op checks its arguments (shape inference; ValueError with Keras-style messages), allocates
// its output and calls a kernel from src/kernels. Ops never change their inputs. Layers are built
// from these. Training adds a backward for each (see the training issue); the signatures are
// functional so that a tape can record (op, inputs, output) later.
//
//   Tensor y = ops::bias_add(ops::matmul(x, kernel), bias);
//   y = ops::unary(ops::UnaryOp::relu, y);
#pragma once

#include <limits>
#include <string_view>
#include <vector>

#include "kerascpp/tensor.h"

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
// x: (..., c), bias: (c,) -> x + bias
Tensor bias_add(const Tensor& x, const Tensor& bias);

// ---- elementwise (float32)
enum class BinaryOp { add, subtract, multiply, divide, maximum, minimum };
// numpy broadcasting
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);

// Every Keras activation that is elementwise. Formulas follow keras/src/activations/activations.py
// (Keras 3); hard_sigmoid_k2 is Keras 2's clip(0.2 x + 0.5, 0, 1), which Keras 3 changed to
// relu6(x + 3) / 6.
enum class UnaryOp {
  linear, relu, relu6, sigmoid, tanh, elu, selu, softplus, softsign, silu, gelu, gelu_approximate,
  hard_sigmoid, hard_sigmoid_k2, hard_silu, exponential, mish, leaky_relu, sqrt, square, abs, exp, log
};
// alpha is the slope of leaky_relu and the scale of elu; unused otherwise. NaN (the default) means the
// Keras default of the activation: 0.2 for leaky_relu, 1.0 for elu, so that an activation looked up
// by name (unary_from_name) computes what Keras computes.
Tensor unary(UnaryOp op, const Tensor& x, float alpha = std::numeric_limits<float>::quiet_NaN());
// UnaryOp for a Keras activation name ("relu", "swish", "gelu", ...); false when it is not elementwise
// (softmax, log_softmax) or unknown. "hard_sigmoid" is the Keras 3 formula: readers of Keras 2 files
// pick hard_sigmoid_k2 themselves.
bool unary_from_name(std::string_view name, UnaryOp* op);
// The enumerator's name ("silu", "gelu_approximate", "hard_sigmoid_k2"...), for messages and configs.
std::string_view unary_name(UnaryOp op);

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

// ---- data movement (any dtype)
Tensor concatenate(const std::vector<Tensor>& xs, int axis);
Tensor transpose(const Tensor& x, const std::vector<int>& perm);
// Repeats every slice along `axis` `reps` times consecutively is NOT this op: tile repeats the
// whole tensor: tile((b, 1, f), {1, n, 1}) -> (b, n, f).
Tensor tile(const Tensor& x, const std::vector<int64_t>& reps);

}  // namespace kerascpp::ops
