// keras.constraints (keras/src/constraints/constraints.py): projections applied to a weight after each
// optimizer update, as Keras's optimizer applies a variable's constraint (training/train_step.cpp).
//   MaxNorm(max_value=2, axis=0), MinMaxNorm(min_value=0, max_value=1, rate=1, axis=0), NonNeg,
//   UnitNorm(axis=0); norms over `axis` (an int or a list), Keras's epsilon 1e-7 below them.
// A layer's config names them under Layer::weight_config_key(weight, "constraint") (kernel_constraint,
// bias_constraint, recurrent_constraint, depthwise_constraint, ...).
#pragma once

#include <string>
#include <vector>

#include "kerascpp/layer.h"

namespace kerascpp::layers {

class Constraint {
 public:
  // A Keras constraint: a name ("non_neg", "max_norm", ...) or {"class_name": ..., "config": {...}};
  // null gives none (active() false). ValueError naming `who` for an unknown one.
  static Constraint from_config(const Json& j, const std::string& who);
  bool active() const { return kind_ != Kind::none; }
  // The projected weight (a new tensor); w float32.
  Tensor apply(const Tensor& w) const;

 private:
  enum class Kind { none, max_norm, min_max_norm, non_neg, unit_norm };
  Kind kind_ = Kind::none;
  double min_value_ = 0, max_value_ = 0, rate_ = 1;
  std::vector<int> axes_{0};
};

}  // namespace kerascpp::layers
