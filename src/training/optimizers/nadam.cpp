// keras.optimizers.Nadam (keras/src/optimizers/nadam.py). Keras 3 keeps the running product of
// the momentum schedule, u_product, as an optimizer variable ("<name>/variable", float32 scalar,
// created after the slots) and updates it once per step before the per-variable updates.
#include <cmath>

#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {
namespace {

using detail::f32;

class Nadam final : public Optimizer {
 public:
  explicit Nadam(const Json& config)
      : Optimizer(detail::prepare_config(
                      config, "Nadam",
                      {{"learning_rate", 0.001}, {"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}}),
                  "nadam") {
    beta_1_ = detail::number(config_, "beta_1");
    beta_2_ = detail::number(config_, "beta_2");
    epsilon_ = detail::number(config_, "epsilon");
  }
  std::string class_name() const override { return "Nadam"; }

 protected:
  void do_build(const std::vector<VariablePtr>& vars) override {
    for (const auto& v : vars) {
      momentums_.push_back(add_slot(*v, "momentum"));
      velocities_.push_back(add_slot(*v, "velocity"));
    }
    // backend.Variable(1.0, dtype=var_list[0].dtype): unnamed, so Keras calls it "variable".
    u_product_ = add_variable("variable", {}, 1.f);
  }
  // Nadam._backend_update_step:
  // u_product = u_product * beta_1 * (1.0 - 0.5 * power(0.96, iterations + 1)), in float32.
  void before_update_steps(double step) override {
    float& u = u_product_->data<float>()[0];
    u = (u * f32(beta_1_)) * (1.0f - 0.5f * std::pow(0.96f, f32(step)));
    u_product_->mark_updated();
  }
  void update_step(const Tensor& grad, Variable& var, size_t index, float lr, double step) override {
    const float local_step = f32(step), next_step = f32(step + 1);
    const float decay = 0.96f, beta_1 = f32(beta_1_), beta_2 = f32(beta_2_), eps = f32(epsilon_);
    const float u_t = beta_1 * (1.0f - 0.5f * std::pow(decay, local_step));
    const float u_t_1 = beta_1 * (1.0f - 0.5f * std::pow(decay, next_step));
    const float u_product_t = u_product_->data<float>()[0];
    const float u_product_t_1 = u_product_t * u_t_1;
    const float beta_2_power = std::pow(beta_2, local_step);
    // Here beta_1 / beta_2 are float32 tensors already, so 1 - beta is computed in float32.
    const float one_minus_b1 = 1.0f - beta_1, one_minus_b2 = 1.0f - beta_2;
    const float* g = grad.data<float>();
    float* x = var.data<float>();
    float* m = momentums_[index]->data<float>();
    float* v = velocities_[index]->data<float>();
    for (int64_t i = 0, n = grad.size(); i < n; ++i) {
      m[i] += (g[i] - m[i]) * one_minus_b1;
      v[i] += (g[i] * g[i] - v[i]) * one_minus_b2;
      const float m_hat = (u_t_1 * m[i]) / (1.0f - u_product_t_1) + ((1.0f - u_t) * g[i]) / (1.0f - u_product_t);
      const float v_hat = v[i] / (1.0f - beta_2_power);
      x[i] -= (m_hat * lr) / (std::sqrt(v_hat) + eps);
    }
    momentums_[index]->mark_updated();
    velocities_[index]->mark_updated();
  }
  Json own_config() const override { return detail::pick(config_, {"beta_1", "beta_2", "epsilon"}); }

 private:
  double beta_1_, beta_2_, epsilon_;
  std::vector<VariablePtr> momentums_, velocities_;
  VariablePtr u_product_;
};

}  // namespace

OptimizerPtr detail::make_nadam(const Json& config) { return std::make_shared<Nadam>(config); }

}  // namespace kerascpp::optimizers
