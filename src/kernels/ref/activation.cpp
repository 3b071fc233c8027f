// Reference activations: the definition of every elementwise Keras activation, in double.
//
// Formulas follow keras/src/activations/activations.py and keras/src/backend/tensorflow/nn.py
// (Keras 3); hard_sigmoid_k2 is Keras 2's keras/activations.py. Where TF uses a numerically stable
// form (softplus, sigmoid, elu via expm1) the reference uses it too.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/ref/ref.h"

namespace kerascpp::kernels::ref {
namespace {

double sigmoid(double x) {
  // exp of a non-positive number never overflows.
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}
// log(1 + exp(x)) = log1p(exp(-|x|)) + max(x, 0), as tf.math.softplus.
double softplus(double x) { return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0); }
double relu6(double x) { return std::min(std::max(x, 0.0), 6.0); }
// Keras 3: relu6(x + 3) / 6 (tensorflow/nn.py hard_sigmoid).
double hard_sigmoid(double x) { return relu6(x + 3.0) / 6.0; }

}  // namespace

double unary_scalar(Unary op, double x, double alpha) {
  constexpr double kPi = 3.14159265358979323846;
  switch (op) {
    case Unary::linear:
      return x;
    case Unary::relu:
      return std::max(x, 0.0);
    case Unary::relu6:
      return relu6(x);
    case Unary::sigmoid:
      return sigmoid(x);
    case Unary::tanh:
      return std::tanh(x);
    // tf.nn.elu is expm1 below 0; Keras scales that part by alpha.
    case Unary::elu:
      return x > 0 ? x : alpha * std::expm1(x);
    case Unary::selu:
      return kSeluScale * (x > 0 ? x : kSeluAlpha * std::expm1(x));
    case Unary::softplus:
      return softplus(x);
    case Unary::softsign:
      return x / (1.0 + std::fabs(x));
    case Unary::silu:
      return x * sigmoid(x);
    case Unary::gelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Unary::gelu_approximate:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / kPi) * (x + 0.044715 * x * x * x)));
    case Unary::hard_sigmoid:
      return hard_sigmoid(x);
    case Unary::hard_sigmoid_k2:
      return std::min(std::max(0.2 * x + 0.5, 0.0), 1.0);
    case Unary::hard_silu:
      return x * hard_sigmoid(x);
    case Unary::exponential:
      return std::exp(x);
    case Unary::mish:
      return x * std::tanh(softplus(x));
    case Unary::leaky_relu:
      return x >= 0 ? x : alpha * x;
    case Unary::sqrt:
      return std::sqrt(x);
    case Unary::square:
      return x * x;
    case Unary::abs:
      return std::fabs(x);
    case Unary::exp:
      return std::exp(x);
    case Unary::log:
      return std::log(x);
  }
  return 0.0;
}

void unary(Unary op, const float* x, float* y, int64_t n, float alpha) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(unary_scalar(op, x[i], alpha));
}

// keras/src/activations/activations.py ReLU.static_call, step by step: x * (x > threshold) (plain
// relu when threshold == 0), clip to [0, max_value] when max_value is given, then subtract
// negative_slope * relu(threshold - x). As in Keras, NaN propagates and x = -inf with a threshold
// gives NaN (-inf * 0).
double relu_scalar(double x, double negative_slope, double max_value, double threshold) {
  double y = threshold != 0 ? x * (x > threshold ? 1.0 : 0.0) : std::max(x, 0.0);
  if (max_value != std::numeric_limits<double>::infinity()) y = std::min(std::max(y, 0.0), max_value);
  if (negative_slope != 0) y -= negative_slope * std::max(threshold - x, 0.0);
  return y;
}

void relu(const float* x, float* y, int64_t n, float negative_slope, float max_value, float threshold) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<float>(relu_scalar(x[i], negative_slope, max_value, threshold));
}

}  // namespace kerascpp::kernels::ref
