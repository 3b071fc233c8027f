// Derivatives of the elementwise activations: dx = dy * f'(x), with f' written from x or from the
// forward output y where that is cheaper (sigmoid, tanh, exp, elu). At a kink the derivative is the
// one TensorFlow's gradient gives (relu'(0) = 0, abs'(0) = 0).
#include <cmath>
#include <limits>

#include "kernels/isa/fast_math.h"
#include "kernels/isa/isa_set.h"

namespace kerascpp::kernels::KCPP_ISA {
namespace {

template <typename F>
void map3(F f, const float* x, const float* y, const float* dy, float* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * f(x[i], y[i]);
}

// The forward's own sigmoid and tanh (activation.cpp), so that a gradient and its forward agree.
inline float sigmoid(float v) { return fast_sigmoid(v); }

}  // namespace

void unary_grad(Unary op, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                float alpha) {
  constexpr float kSqrtHalf = 0.70710678118654752440f;
  constexpr float kInvSqrt2Pi = 0.39894228040143267794f;
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  constexpr float kSeluA = static_cast<float>(kSeluAlpha), kSeluS = static_cast<float>(kSeluScale);
  switch (op) {
    case Unary::linear:
      return map3([](float, float) { return 1.f; }, x, y, dy, dx, n);
    case Unary::relu:
      return map3([](float v, float) { return v > 0.f ? 1.f : 0.f; }, x, y, dy, dx, n);
    case Unary::relu6:
      return map3([](float v, float) { return v > 0.f && v < 6.f ? 1.f : 0.f; }, x, y, dy, dx, n);
    case Unary::sigmoid:
      return map3([](float, float s) { return s * (1.f - s); }, x, y, dy, dx, n);
    case Unary::tanh:
      return map3([](float, float t) { return 1.f - t * t; }, x, y, dy, dx, n);
    case Unary::elu:
      return map3([alpha](float v, float e) { return v > 0.f ? 1.f : e + alpha; }, x, y, dy, dx, n);
    case Unary::selu:
      return map3([=](float v, float e) { return v > 0.f ? kSeluS : e + kSeluS * kSeluA; }, x, y, dy, dx, n);
    case Unary::softplus:
      return map3([](float v, float) { return sigmoid(v); }, x, y, dy, dx, n);
    case Unary::softsign:
      return map3(
          [](float v, float) {
            float d = 1.f + std::fabs(v);
            return 1.f / (d * d);
          },
          x, y, dy, dx, n);
    case Unary::silu:
      return map3(
          [](float v, float) {
            float s = sigmoid(v);
            return s * (1.f + v * (1.f - s));
          },
          x, y, dy, dx, n);
    case Unary::gelu:
      return map3(
          [=](float v, float) {
            return 0.5f * (1.f + std::erf(v * kSqrtHalf)) + v * kInvSqrt2Pi * std::exp(-0.5f * v * v);
          },
          x, y, dy, dx, n);
    case Unary::gelu_approximate:
      return map3(
          [=](float v, float) {  // with s = sigmoid(2u) = (1 + tanh(u)) / 2, as the forward: 1 - tanh(u)^2 = 4 s (1 - s)
            const float s = fast_sigmoid(2.f * kSqrt2OverPi * (v + 0.044715f * v * v * v));
            return s + 2.f * v * s * (1.f - s) * kSqrt2OverPi * (1.f + 3.f * 0.044715f * v * v);
          },
          x, y, dy, dx, n);
    case Unary::hard_sigmoid:
      return map3([](float v, float) { return v > -3.f && v < 3.f ? 1.f / 6.f : 0.f; }, x, y, dy, dx, n);
    case Unary::hard_sigmoid_k2:
      return map3([](float v, float) { return v > -2.5f && v < 2.5f ? 0.2f : 0.f; }, x, y, dy, dx, n);
    case Unary::hard_silu:
      return map3([](float v, float) { return v <= -3.f ? 0.f : (v >= 3.f ? 1.f : (2.f * v + 3.f) / 6.f); },
                  x, y, dy, dx, n);
    case Unary::exponential:
    case Unary::exp:
      return map3([](float, float e) { return e; }, x, y, dy, dx, n);
    case Unary::mish:
      return map3(
          [](float v, float) {
            float sp = std::log1p(std::exp(-std::fabs(v))) + (v > 0.f ? v : 0.f);
            float t = fast_tanh(sp);
            return t + v * (1.f - t * t) * sigmoid(v);
          },
          x, y, dy, dx, n);
    case Unary::leaky_relu:
      return map3([alpha](float v, float) { return v >= 0.f ? 1.f : alpha; }, x, y, dy, dx, n);
    case Unary::sqrt:
      return map3([](float, float r) { return 0.5f / r; }, x, y, dy, dx, n);
    case Unary::square:
      return map3([](float v, float) { return 2.f * v; }, x, y, dy, dx, n);
    case Unary::abs:
      return map3([](float v, float) { return v > 0.f ? 1.f : (v < 0.f ? -1.f : 0.f); }, x, y, dy, dx, n);
    case Unary::log:
      return map3([](float v, float) { return 1.f / v; }, x, y, dy, dx, n);
  }
}

// The derivative of kernels::relu's steps: clip(x * (x > threshold), 0, max) - slope * relu(threshold - x).
void relu_grad(const float* x, const float* dy, float* dx, int64_t n, float negative_slope, float max_value,
               float threshold) {
  const bool clip = max_value != std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    float d = (threshold != 0.f ? v > threshold : v > 0.f) ? 1.f : 0.f;
    if (clip && d != 0.f && !(v > 0.f && v < max_value)) d = 0.f;
    if (negative_slope != 0.f && threshold - v > 0.f) d += negative_slope;
    dx[i] = dy[i] * d;
  }
}

}  // namespace kerascpp::kernels::KCPP_ISA
