// Elementwise activations: unary (every elementwise Keras activation), the full relu, and the map
// from Keras activation names.
#include <cmath>
#include <string_view>

#include "kernels/elementwise.h"
#include "ops/checks.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

kernels::Unary to_kernel(UnaryOp op) {
  using K = kernels::Unary;
  switch (op) {
    case UnaryOp::linear:
      return K::linear;
    case UnaryOp::relu:
      return K::relu;
    case UnaryOp::relu6:
      return K::relu6;
    case UnaryOp::sigmoid:
      return K::sigmoid;
    case UnaryOp::tanh:
      return K::tanh;
    case UnaryOp::elu:
      return K::elu;
    case UnaryOp::selu:
      return K::selu;
    case UnaryOp::softplus:
      return K::softplus;
    case UnaryOp::softsign:
      return K::softsign;
    case UnaryOp::silu:
      return K::silu;
    case UnaryOp::gelu:
      return K::gelu;
    case UnaryOp::gelu_approximate:
      return K::gelu_approximate;
    case UnaryOp::hard_sigmoid:
      return K::hard_sigmoid;
    case UnaryOp::hard_sigmoid_k2:
      return K::hard_sigmoid_k2;
    case UnaryOp::hard_silu:
      return K::hard_silu;
    case UnaryOp::exponential:
      return K::exponential;
    case UnaryOp::mish:
      return K::mish;
    case UnaryOp::leaky_relu:
      return K::leaky_relu;
    case UnaryOp::sqrt:
      return K::sqrt;
    case UnaryOp::square:
      return K::square;
    case UnaryOp::abs:
      return K::abs;
    case UnaryOp::exp:
      return K::exp;
    case UnaryOp::log:
      return K::log;
  }
  KCPP_THROW(ValueError, "Unknown UnaryOp ", static_cast<int>(op));
}

// Keras defaults when the caller passes no alpha: keras.activations.elu(alpha=1.0),
// keras.activations.leaky_relu(negative_slope=0.2).
float default_alpha(UnaryOp op) {
  if (op == UnaryOp::elu) return 1.f;
  if (op == UnaryOp::leaky_relu) return 0.2f;
  return 0.f;
}

}  // namespace

std::string_view unary_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::linear:
      return "linear";
    case UnaryOp::relu:
      return "relu";
    case UnaryOp::relu6:
      return "relu6";
    case UnaryOp::sigmoid:
      return "sigmoid";
    case UnaryOp::tanh:
      return "tanh";
    case UnaryOp::elu:
      return "elu";
    case UnaryOp::selu:
      return "selu";
    case UnaryOp::softplus:
      return "softplus";
    case UnaryOp::softsign:
      return "softsign";
    case UnaryOp::silu:
      return "silu";
    case UnaryOp::gelu:
      return "gelu";
    case UnaryOp::gelu_approximate:
      return "gelu_approximate";
    case UnaryOp::hard_sigmoid:
      return "hard_sigmoid";
    case UnaryOp::hard_sigmoid_k2:
      return "hard_sigmoid_k2";
    case UnaryOp::hard_silu:
      return "hard_silu";
    case UnaryOp::exponential:
      return "exponential";
    case UnaryOp::mish:
      return "mish";
    case UnaryOp::leaky_relu:
      return "leaky_relu";
    case UnaryOp::sqrt:
      return "sqrt";
    case UnaryOp::square:
      return "square";
    case UnaryOp::abs:
      return "abs";
    case UnaryOp::exp:
      return "exp";
    case UnaryOp::log:
      return "log";
  }
  return "unknown";
}

Tensor unary(UnaryOp op, const Tensor& x, float alpha) {
  detail::check_float32(unary_name(op).data(), x, "x");  // the names are string literals
  const kernels::Unary k = to_kernel(op);
  Tensor y = Tensor::empty(x.shape());
  const float a = std::isnan(alpha) ? default_alpha(op) : alpha;
  kernels::unary(k, x.data<float>(), y.data<float>(), x.size(), a);
  if (Recorder* r = tape_for({&x}))
    r->record(unary_name(op), {x}, y, [k, x, y, a](const Tensor& dy) {
      Tensor dx = Tensor::empty(x.shape());
      kernels::unary_grad(k, x.data<float>(), y.data<float>(), dy.data<float>(), dx.data<float>(), x.size(), a);
      return Grads{dx};
    });
  return y;
}

// Names as keras.activations.get accepts them (keras/src/activations/__init__.py), including the
// aliases swish -> silu and hard_swish -> hard_silu. "hard_sigmoid" is the Keras 3 formula; the
// config reader renames Keras 2's to "hard_sigmoid_k2" (io/config_dialect.h).
bool unary_from_name(std::string_view name, UnaryOp* op) {
  struct Entry {
    std::string_view name;
    UnaryOp op;
  };
  static constexpr Entry kNames[] = {
      {"linear", UnaryOp::linear},
      {"relu", UnaryOp::relu},
      {"relu6", UnaryOp::relu6},
      {"sigmoid", UnaryOp::sigmoid},
      {"tanh", UnaryOp::tanh},
      {"elu", UnaryOp::elu},
      {"selu", UnaryOp::selu},
      {"softplus", UnaryOp::softplus},
      {"softsign", UnaryOp::softsign},
      {"swish", UnaryOp::silu},
      {"silu", UnaryOp::silu},
      {"gelu", UnaryOp::gelu},
      {"hard_sigmoid", UnaryOp::hard_sigmoid},
      {"hard_sigmoid_k2", UnaryOp::hard_sigmoid_k2},
      {"hard_silu", UnaryOp::hard_silu},
      {"hard_swish", UnaryOp::hard_silu},
      {"exponential", UnaryOp::exponential},
      {"mish", UnaryOp::mish},
      {"leaky_relu", UnaryOp::leaky_relu},
  };
  for (const Entry& e : kNames) {
    if (e.name == name) {
      if (op) *op = e.op;
      return true;
    }
  }
  return false;
}

Tensor relu(const Tensor& x, float negative_slope, float max_value, float threshold) {
  detail::check_float32("relu", x, "x");
  KCPP_CHECK(!std::isnan(negative_slope) && !std::isnan(max_value) && !std::isnan(threshold), ValueError,
             "relu: arguments must not be NaN. Received: negative_slope=", negative_slope,
             ", max_value=", max_value, ", threshold=", threshold);
  Tensor y = Tensor::empty(x.shape());
  kernels::relu(x.data<float>(), y.data<float>(), x.size(), negative_slope, max_value, threshold);
  if (Recorder* r = tape_for({&x}))
    r->record("relu", {x}, y, [=](const Tensor& dy) {
      Tensor dx = Tensor::empty(x.shape());
      kernels::relu_grad(x.data<float>(), dy.data<float>(), dx.data<float>(), x.size(), negative_slope, max_value,
                         threshold);
      return Grads{dx};
    });
  return y;
}

}  // namespace kerascpp::ops
