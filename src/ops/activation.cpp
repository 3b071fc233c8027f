// Elementwise activations: unary (every elementwise Keras activation), the full relu, and the map
// from Keras activation names.
#include <cmath>
#include <string_view>

#include "kernels/elementwise.h"
#include "ops/checks.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {
// Keras defaults when the caller passes no alpha: keras.activations.elu(alpha=1.0),
// keras.activations.leaky_relu(negative_slope=0.2).
float default_alpha(UnaryOp op) {
  if (op == UnaryOp::elu) return 1.f;
  if (op == UnaryOp::leaky_relu) return 0.2f;
  return 0.f;
}

Tensor unary(UnaryOp op, const Tensor& x, float alpha) {
  detail::check_float32(unary_name(op).data(), x, "x");  // the names are string literals
  Tensor y = Tensor::empty(x.shape());
  const float a = std::isnan(alpha) ? default_alpha(op) : alpha;
  kernels::unary(op, x.data<float>(), y.data<float>(), x.size(), a);
  if (Recorder* r = tape_for({&x}))
    r->record(unary_name(op), {x}, y, [op, x, y, a](const Tensor& dy) {
      Tensor dx = Tensor::empty(x.shape());
      kernels::unary_grad(op, x.data<float>(), y.data<float>(), dy.data<float>(), dx.data<float>(), x.size(),
                          a);
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
      kernels::relu_grad(x.data<float>(), dy.data<float>(), dx.data<float>(), x.size(), negative_slope,
                         max_value, threshold);
      return Grads{dx};
    });
  return y;
}

}  // namespace kerascpp::ops
