// keras.optimizers.Adamax (keras/src/optimizers/adamax.py): Adam with the infinity norm.
#include <algorithm>
#include <cmath>

#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {
namespace {

using detail::f32;

class Adamax final : public Optimizer {
 public:
  explicit Adamax(const Json& config)
      : Optimizer(detail::prepare_config(
                      config, "Adamax",
                      {{"learning_rate", 0.001}, {"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}}),
                  "adamax") {
    beta_1_ = detail::number(config_, "beta_1");
    beta_2_ = detail::number(config_, "beta_2");
    epsilon_ = detail::number(config_, "epsilon");
  }
  std::string class_name() const override { return "Adamax"; }

 protected:
  void do_build(const std::vector<VariablePtr>& vars) override {
    // add_optimizer_variables(var_list, ["momentum", "norm"]): interleaved per variable.
    for (const auto& v : vars) {
      m_.push_back(add_slot(*v, "momentum"));
      u_.push_back(add_slot(*v, "norm"));
    }
  }
  void update_step(const Tensor& grad, Variable& var, size_t index, float lr, double step) override {
    const float beta_1_power = std::pow(f32(beta_1_), f32(step));
    const float one_minus_b1 = f32(1.0 - beta_1_), b2 = f32(beta_2_), eps = f32(epsilon_);
    const float* g = grad.data<float>();
    float* x = var.data<float>();
    float* m = m_[index]->data<float>();
    float* u = u_[index]->data<float>();
    for (int64_t i = 0, n = grad.size(); i < n; ++i) {
      m[i] += (g[i] - m[i]) * one_minus_b1;
      u[i] = std::max(b2 * u[i], std::fabs(g[i]));
      x[i] -= (lr * m[i]) / ((1.f - beta_1_power) * (u[i] + eps));
    }
    m_[index]->mark_updated();
    u_[index]->mark_updated();
  }
  Json own_config() const override { return detail::pick(config_, {"beta_1", "beta_2", "epsilon"}); }

 private:
  double beta_1_, beta_2_, epsilon_;
  std::vector<VariablePtr> m_, u_;
};

}  // namespace

OptimizerPtr detail::make_adamax(const Json& config) { return std::make_shared<Adamax>(config); }

}  // namespace kerascpp::optimizers
