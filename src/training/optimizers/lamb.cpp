// keras.optimizers.Lamb (keras/src/optimizers/lamb.py): Adam's update scaled per variable by the
// ratio of the variable's norm to the update's (layer-wise adaptive moments).
#include <cmath>

#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {
namespace {

using detail::f32;

class Lamb final : public Optimizer {
 public:
  explicit Lamb(const Json& config)
      : Optimizer(detail::prepare_config(
                      config, "Lamb", {{"learning_rate", 0.001}, {"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}}),
                  "lamb") {
    beta_1_ = detail::number(config_, "beta_1");
    beta_2_ = detail::number(config_, "beta_2");
    epsilon_ = detail::number(config_, "epsilon");
  }
  std::string class_name() const override { return "Lamb"; }

 protected:
  void do_build(const std::vector<VariablePtr>& vars) override {
    for (const auto& v : vars) {
      momentums_.push_back(add_slot(*v, "momentum"));
      velocities_.push_back(add_slot(*v, "velocity"));
    }
  }
  void update_step(const Tensor& grad, Variable& var, size_t index, float lr, double step) override {
    const float local_step = f32(step);
    const float b1_power = std::pow(f32(beta_1_), local_step), b2_power = std::pow(f32(beta_2_), local_step);
    const float one_minus_b1 = f32(1.0 - beta_1_), one_minus_b2 = f32(1.0 - beta_2_), eps = f32(epsilon_);
    const float* g = grad.data<float>();
    float* x = var.data<float>();
    float* m = momentums_[index]->data<float>();
    float* v = velocities_[index]->data<float>();
    const int64_t n = grad.size();
    std::vector<float> update(static_cast<size_t>(n));
    float w_sq = 0, u_sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      m[i] += (g[i] - m[i]) * one_minus_b1;
      v[i] += (g[i] * g[i] - v[i]) * one_minus_b2;
      update[i] = (m[i] / (1.0f - b1_power)) / (std::sqrt(v[i] / (1.0f - b2_power)) + eps);
      w_sq += x[i] * x[i];
      u_sq += update[i] * update[i];
    }
    const float w_norm = std::sqrt(w_sq), g_norm = std::sqrt(u_sq);
    const float ratio = w_norm > 0 && g_norm > 0 ? w_norm / g_norm : 1.0f;
    for (int64_t i = 0; i < n; ++i) x[i] -= ratio * lr * update[i];
    momentums_[index]->mark_updated();
    velocities_[index]->mark_updated();
  }
  Json own_config() const override { return detail::pick(config_, {"beta_1", "beta_2", "epsilon"}); }

 private:
  double beta_1_, beta_2_, epsilon_;
  std::vector<VariablePtr> momentums_, velocities_;
};

}  // namespace

OptimizerPtr detail::make_lamb(const Json& config) { return std::make_shared<Lamb>(config); }

}  // namespace kerascpp::optimizers
