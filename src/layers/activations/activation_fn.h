// A Keras activation given by name in a layer config ("relu", "softmax", ...): parsed once when
// the layer is made, applied on every call.
#pragma once

#include <string>

#include "kerascpp/layer.h"
#include "ops/ops.h"

namespace kerascpp::layers {

class ActivationFn {
 public:
  ActivationFn() = default;  // linear
  // `spec` is a string or a serialized Keras function ({"class_name": "function", "config": "relu"}).
  // ValueError naming the layer for an unknown activation.
  ActivationFn(const Json& spec, const std::string& layer_name);
  Tensor operator()(const Tensor& x) const;
  // For elementwise activations: applies it to n floats in place, as operator() computes them (no
  // tape: for inference loops that keep no tensors). False, doing nothing, for softmax / log_softmax.
  bool apply_in_place(float* x, int64_t n) const;
  // y = this activation of x, n floats whose last axis has `last` of them, with the kernels operator()
  // runs (bit-identical to it); y may be x. For inference plans (models/inference_plan.h).
  void apply(const float* x, float* y, int64_t n, int64_t last) const;
  bool is_linear() const { return kind_ == Kind::unary && op_ == ops::UnaryOp::linear; }
  bool is_relu() const { return kind_ == Kind::unary && op_ == ops::UnaryOp::relu; }
  // The elementwise op, or false for softmax / log_softmax.
  bool unary_op(ops::UnaryOp* op) const {
    *op = op_;
    return kind_ == Kind::unary;
  }
  const std::string& name() const { return name_; }

 private:
  enum class Kind { unary, softmax, log_softmax } kind_ = Kind::unary;
  ops::UnaryOp op_ = ops::UnaryOp::linear;
  std::string name_ = "linear";
};

}  // namespace kerascpp::layers
