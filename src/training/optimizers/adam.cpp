// keras.optimizers.Adam (keras/src/optimizers/adam.py), with amsgrad.
#include "training/optimizers/adam.h"

#include <cmath>

#include "kernels/optimizer.h"

namespace kerascpp::optimizers::detail {
namespace {

Json adam_defaults(const Json& weight_decay_default) {
  Json d = {{"learning_rate", 0.001}, {"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}, {"amsgrad", false}};
  if (!weight_decay_default.is_null()) d["weight_decay"] = weight_decay_default;
  return d;
}

}  // namespace

Adam::Adam(const Json& config, const std::string& class_name, const std::string& default_name,
           const Json& weight_decay_default)
    : Optimizer(prepare_config(config, class_name, adam_defaults(weight_decay_default)), default_name),
      class_name_(class_name) {
  beta_1_ = number(config_, "beta_1");
  beta_2_ = number(config_, "beta_2");
  epsilon_ = number(config_, "epsilon");
  KCPP_CHECK(config_["amsgrad"].is_boolean(), ValueError, "`amsgrad` must be a bool. Received: amsgrad=",
             config_["amsgrad"].dump());
  amsgrad_ = config_["amsgrad"].get<bool>();
}

void Adam::do_build(const std::vector<VariablePtr>& vars) {
  // add_optimizer_variables(var_list, ["momentum", "velocity"]) interleaves them per variable.
  for (const auto& v : vars) {
    momentums_.push_back(add_slot(*v, "momentum"));
    velocities_.push_back(add_slot(*v, "velocity"));
  }
  if (amsgrad_)
    for (const auto& v : vars) velocity_hats_.push_back(add_slot(*v, "velocity_hat"));
}

namespace {

// This step's constants, rounded to float32 where Keras's tensors are.
kernels::AdamStep adam_step(double beta_1, double beta_2, double epsilon, float lr, double step) {
  const float local_step = f32(step);
  const float beta_1_power = std::pow(f32(beta_1), local_step);
  const float beta_2_power = std::pow(f32(beta_2), local_step);
  const float alpha = lr * std::sqrt(1.f - beta_2_power) / (1.f - beta_1_power);
  // `1 - self.beta_1` is a Python double, rounded to float32 when it meets the tensor.
  return {f32(1.0 - beta_1), f32(1.0 - beta_2), alpha, f32(epsilon)};
}

}  // namespace

void Adam::update_step(const Tensor& grad, Variable& var, size_t index, float lr, double step) {
  update_steps({{grad, &var, index}}, lr, step);
}

// Every variable in one pass (Optimizer::update_ranges), each element by kernels::adam_update: the
// scalar loop's bits on every instruction set.
void Adam::update_steps(const std::vector<Update>& updates, float lr, double step) {
  const kernels::AdamStep s = adam_step(beta_1_, beta_2_, epsilon_, lr, step);
  update_ranges(updates, [&](size_t k, int64_t b, int64_t e) {
    const Update& u = updates[k];
    float* vhat = amsgrad_ ? velocity_hats_[u.index]->data<float>() + b : nullptr;
    kernels::adam_update(u.grad.data<float>() + b, u.var->data<float>() + b, momentums_[u.index]->data<float>() + b,
                         velocities_[u.index]->data<float>() + b, vhat, e - b, s);
  });
  for (const Update& u : updates) {
    momentums_[u.index]->mark_updated();
    velocities_[u.index]->mark_updated();
    if (amsgrad_) velocity_hats_[u.index]->mark_updated();
  }
}

OptimizerPtr make_adam(const Json& config) { return std::make_shared<Adam>(config); }

}  // namespace kerascpp::optimizers::detail
