#include "layers/activations/activation_fn.h"

#include <cstring>

#include "kernels/elementwise.h"
#include "kernels/reduce.h"

namespace kerascpp::layers {

ActivationFn::ActivationFn(const Json& spec, const std::string& layer_name) {
  if (spec.is_null()) return;
  std::string name;
  if (spec.is_string()) {
    name = spec.get<std::string>();
  } else if (spec.is_object() && spec.contains("config") && spec["config"].is_string()) {
    name = spec["config"].get<std::string>();  // Keras 3 serialized function
  } else {
    KCPP_THROW(ValueError, "Could not interpret activation of layer '", layer_name,
               "'. Received: activation=", spec.dump());
  }
  name_ = name;
  if (name == "softmax") {
    kind_ = Kind::softmax;
  } else if (name == "log_softmax") {
    kind_ = Kind::log_softmax;
  } else {
    KCPP_CHECK(ops::unary_from_name(name, &op_), ValueError, "Unknown activation function '", name,
               "' in layer '", layer_name, "'");
  }
}

Tensor ActivationFn::operator()(const Tensor& x) const {
  switch (kind_) {
    case Kind::softmax: return ops::softmax(x, -1);
    case Kind::log_softmax: return ops::log_softmax(x, -1);
    case Kind::unary: break;
  }
  if (op_ == ops::UnaryOp::linear) return x;
  return ops::unary(op_, x);  // the Keras default alpha of leaky_relu / elu
}

bool ActivationFn::apply_in_place(float* x, int64_t n) const {
  if (kind_ != Kind::unary) return false;
  apply(x, x, n, n);
  return true;
}

void ActivationFn::apply(const float* x, float* y, int64_t n, int64_t last) const {
  const int64_t rows = last > 0 ? n / last : 0;
  switch (kind_) {
    case Kind::softmax: return kernels::softmax(x, y, rows, last, 1);
    case Kind::log_softmax: return kernels::log_softmax(x, y, rows, last, 1);
    case Kind::unary: break;
  }
  if (op_ != ops::UnaryOp::linear)
    kernels::unary(op_, x, y, n, ops::default_alpha(op_));
  else if (x != y && n > 0)
    std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
}

}  // namespace kerascpp::layers
