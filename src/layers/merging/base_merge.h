// Base of the elementwise merge layers (Add, Subtract, Multiply, Average, Maximum, Minimum), as
// keras/src/layers/merging/base_merge.py: a list of at least two inputs of broadcastable shapes.
#pragma once

#include "layers/config_utils.h"
#include "ops/ops.h"

namespace kerascpp::layers {

class BaseMerge : public Layer {
 public:
  using Layer::Layer;
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override;
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override;
  bool supports_masking() const override { return true; }
  ops::BinaryOp merge_op() const { return op(); }
  virtual bool averages() const { return false; }  // Average: the folded inputs divided by their count
  // Masks reach a merge by propagation only in tf_keras graphs (Keras 3 records the masks of the layers
  // that take one), so tf_keras's base_merge.compute_mask: the inputs' masks combined with a logical and.
  std::vector<Tensor> compute_mask(const std::vector<Tensor>& in, const std::vector<Tensor>& masks) const override;

 protected:
  virtual size_t min_inputs() const { return 2; }
  virtual size_t max_inputs() const { return SIZE_MAX; }
  // Folds the inputs pairwise with `op` by default.
  virtual Tensor merge(const std::vector<Tensor>& in) const;
  virtual ops::BinaryOp op() const = 0;
};

}  // namespace kerascpp::layers
