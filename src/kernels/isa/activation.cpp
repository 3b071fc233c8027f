// Fast activations: one switch on the op, then a float loop per op. The cheap ones (relu, relu6,
// hard_sigmoid, leaky_relu, square, abs...) vectorise, and so do sigmoid, tanh and the ones built on
// them (silu, gelu's tanh form, mish's tanh; kernels/isa/fast_math.h); the others call <cmath> per
// element. Formulas match ref/activation.cpp (the definitions, from Keras 3), in float.
#include <cmath>
#include <limits>

#include "kernels/isa/fast_math.h"
#include "kernels/isa/isa_set.h"

namespace kerascpp::kernels::KCPP_ISA {
namespace {

template <typename F>
void map(F f, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

inline float sigmoid(float v) { return fast_sigmoid(v); }
inline float softplus(float v) { return std::log1p(std::exp(-std::fabs(v))) + (v > 0.f ? v : 0.f); }
inline float relu6(float v) { return v < 0.f ? 0.f : (v > 6.f ? 6.f : v); }
inline float hard_sigmoid(float v) { return relu6(v + 3.f) / 6.f; }

}  // namespace

void unary(Unary op, const float* x, float* y, int64_t n, float alpha) {
  constexpr float kSqrtHalf = 0.70710678118654752440f;
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  constexpr float kSeluA = static_cast<float>(kSeluAlpha), kSeluS = static_cast<float>(kSeluScale);
  switch (op) {
    case Unary::linear:
      return map([](float v) { return v; }, x, y, n);
    case Unary::relu:
      return map([](float v) { return v < 0.f ? 0.f : v; }, x, y, n);
    case Unary::relu6:
      return map(relu6, x, y, n);
    case Unary::sigmoid:
      return map(sigmoid, x, y, n);
    case Unary::tanh:
      return map(fast_tanh, x, y, n);
    case Unary::elu:
      return map([alpha](float v) { return v > 0.f ? v : alpha * std::expm1(v); }, x, y, n);
    case Unary::selu:
      return map([=](float v) { return kSeluS * (v > 0.f ? v : kSeluA * std::expm1(v)); }, x, y, n);
    case Unary::softplus:
      return map(softplus, x, y, n);
    case Unary::softsign:
      return map([](float v) { return v / (1.f + std::fabs(v)); }, x, y, n);
    case Unary::silu:
      return map([](float v) { return v * sigmoid(v); }, x, y, n);
    case Unary::gelu:
      return map([=](float v) { return 0.5f * v * (1.f + std::erf(v * kSqrtHalf)); }, x, y, n);
    case Unary::gelu_approximate:  // 0.5 v (1 + tanh(u)) as v sigmoid(2u): no cancellation where tanh(u) is near -1
      return map([=](float v) { return v * sigmoid(2.f * kSqrt2OverPi * (v + 0.044715f * v * v * v)); }, x, y, n);
    case Unary::hard_sigmoid:
      return map(hard_sigmoid, x, y, n);
    case Unary::hard_sigmoid_k2:
      return map(
          [](float v) {
            float t = 0.2f * v + 0.5f;
            return t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
          },
          x, y, n);
    case Unary::hard_silu:
      return map([](float v) { return v * hard_sigmoid(v); }, x, y, n);
    case Unary::exponential:
    case Unary::exp:
      return map([](float v) { return std::exp(v); }, x, y, n);
    case Unary::mish:
      return map([](float v) { return v * fast_tanh(softplus(v)); }, x, y, n);
    case Unary::leaky_relu:
      return map([alpha](float v) { return v >= 0.f ? v : alpha * v; }, x, y, n);
    case Unary::sqrt:
      return map([](float v) { return std::sqrt(v); }, x, y, n);
    case Unary::square:
      return map([](float v) { return v * v; }, x, y, n);
    case Unary::abs:
      return map([](float v) { return std::fabs(v); }, x, y, n);
    case Unary::log:
      return map([](float v) { return std::log(v); }, x, y, n);
  }
}

// keras/src/activations/activations.py ReLU.static_call; see ref::relu_scalar for the steps.
void relu(const float* x, float* y, int64_t n, float negative_slope, float max_value, float threshold) {
  const bool clip = max_value != std::numeric_limits<float>::infinity();
  if (negative_slope == 0.f && !clip && threshold == 0.f)
    return KCPP_ISA::unary(Unary::relu, x, y, n, 0.f);  // qualified: ADL also finds kernels::unary
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    float r = threshold != 0.f ? v * (v > threshold ? 1.f : 0.f) : (v < 0.f ? 0.f : v);
    if (clip) r = r < 0.f ? 0.f : (r > max_value ? max_value : r);
    if (negative_slope != 0.f) {
      float below = threshold - v;
      r -= negative_slope * (below < 0.f ? 0.f : below);  // NaN stays NaN, as tf.nn.relu
    }
    y[i] = r;
  }
}

}  // namespace kerascpp::kernels::KCPP_ISA
