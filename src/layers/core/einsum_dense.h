// keras.layers.EinsumDense (keras/src/layers/core/einsum_dense.py): y = activation(einsum(equation, x,
// kernel) + bias), the kernel's shape read from the equation, the input shape and output_shape (the
// output without its batch dimension and elided axes; None where the input gives it). Equations
// "ab,bc->ac", "...b,bc->...c" (ellipsis on the left) and "ab...,bc->ac..." (on the right); bias_axes
// names the output letters the bias spans. MultiHeadAttention and GroupQueryAttention project with it.
//
//   EinsumDense("abc,cde->abde", output_shape=(None, 2, 4), bias_axes="de"): (b, t, c) -> (b, t, 2, 4)
#pragma once

#include "layers/activations/activation_fn.h"

namespace kerascpp::layers {

class EinsumDense : public Layer {
 public:
  explicit EinsumDense(const Json& config);
  std::string class_name() const override { return "EinsumDense"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override;
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override;
  // The same for one tensor (MultiHeadAttention's projections).
  Tensor apply(const Tensor& x) const;

 protected:
  void do_build(const std::vector<Shape>& in) override;

 private:
  // The equation with the ellipsis spelled out for an input of `rank`; its three parts.
  struct Letters {
    std::string in, kernel, out;
    int elided = 0;
    bool left = false;
  };
  Letters letters(int rank) const;
  Shape output_shape_for(const Shape& in) const;

  std::string equation_;
  std::string bias_axes_;
  Json output_shape_;  // as configured: a list (null entries) or an int
  ActivationFn activation_;
  VariablePtr kernel_, bias_;
  Shape bias_shape_;  // Keras's, trailing 1s included
  std::string built_equation_;  // for the built input rank, the ellipsis spelled out (set by do_build)
  int built_rank_ = 0;
};

}  // namespace kerascpp::layers
