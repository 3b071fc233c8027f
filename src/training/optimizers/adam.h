// keras.optimizers.Adam (keras/src/optimizers/adam.py), shared with AdamW (adamw.cpp), which is
// Adam with a weight_decay default of 0.004.
#pragma once

#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers::detail {

class Adam : public Optimizer {
 public:
  explicit Adam(const Json& config) : Adam(config, "Adam", "adam", Json()) {}
  std::string class_name() const override { return class_name_; }

 protected:
  // For AdamW: its class name, default name and weight_decay default.
  Adam(const Json& config, const std::string& class_name, const std::string& default_name,
       const Json& weight_decay_default);
  void do_build(const std::vector<VariablePtr>& vars) override;
  void update_step(const Tensor& grad, Variable& var, size_t index, float lr, double step) override;
  void update_steps(const std::vector<Update>& updates, float lr, double step) override;
  Json own_config() const override { return pick(config_, {"beta_1", "beta_2", "epsilon", "amsgrad"}); }

 private:
  std::string class_name_;
  double beta_1_, beta_2_, epsilon_;
  bool amsgrad_;
  std::vector<VariablePtr> momentums_, velocities_, velocity_hats_;
};

}  // namespace kerascpp::optimizers::detail
