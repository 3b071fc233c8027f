// keras.optimizers.Adadelta (keras/src/optimizers/adadelta.py).
#include <cmath>

#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {
namespace {

using detail::f32;

class Adadelta final : public Optimizer {
 public:
  explicit Adadelta(const Json& config)
      : Optimizer(detail::prepare_config(config, "Adadelta",
                                         {{"learning_rate", 0.001}, {"rho", 0.95}, {"epsilon", 1e-7}}),
                  "adadelta") {
    rho_ = detail::number(config_, "rho");
    epsilon_ = detail::number(config_, "epsilon");
  }
  std::string class_name() const override { return "Adadelta"; }

 protected:
  void do_build(const std::vector<VariablePtr>& vars) override {
    // add_optimizer_variables(var_list, ["accumulated_grad", "accumulated_delta_var"]): interleaved.
    for (const auto& v : vars) {
      accumulated_grads_.push_back(add_slot(*v, "accumulated_grad"));
      accumulated_delta_vars_.push_back(add_slot(*v, "accumulated_delta_var"));
    }
  }
  void update_step(const Tensor& grad, Variable& var, size_t index, float lr, double) override {
    const float rho = f32(rho_), one_minus_rho = f32(1.0 - rho_), eps = f32(epsilon_);
    const float* g = grad.data<float>();
    float* x = var.data<float>();
    float* acc_g = accumulated_grads_[index]->data<float>();
    float* acc_d = accumulated_delta_vars_[index]->data<float>();
    for (int64_t i = 0, n = grad.size(); i < n; ++i) {
      acc_g[i] = rho * acc_g[i] + one_minus_rho * (g[i] * g[i]);
      // rms(x) = sqrt(x + epsilon)
      const float delta = -((std::sqrt(acc_d[i] + eps) * g[i]) / std::sqrt(acc_g[i] + eps));
      acc_d[i] = rho * acc_d[i] + one_minus_rho * (delta * delta);
      x[i] += lr * delta;
    }
    accumulated_grads_[index]->mark_updated();
    accumulated_delta_vars_[index]->mark_updated();
  }
  Json own_config() const override { return detail::pick(config_, {"rho", "epsilon"}); }

 private:
  double rho_, epsilon_;
  std::vector<VariablePtr> accumulated_grads_, accumulated_delta_vars_;
};

}  // namespace

OptimizerPtr detail::make_adadelta(const Json& config) { return std::make_shared<Adadelta>(config); }

}  // namespace kerascpp::optimizers
