// keras.optimizers.Ftrl (keras/src/optimizers/ftrl.py): follow the regularised leader, with L1, L2,
// L2 shrinkage and beta.
#include <algorithm>
#include <cmath>

#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {
namespace {

using detail::f32;

class Ftrl final : public Optimizer {
 public:
  explicit Ftrl(const Json& config)
      : Optimizer(detail::prepare_config(config, "Ftrl",
                                         {{"learning_rate", 0.001}, {"learning_rate_power", -0.5},
                                          {"initial_accumulator_value", 0.1}, {"l1_regularization_strength", 0.0},
                                          {"l2_regularization_strength", 0.0},
                                          {"l2_shrinkage_regularization_strength", 0.0}, {"beta", 0.0}}),
                  "ftrl") {
    power_ = detail::number(config_, "learning_rate_power");
    initial_ = detail::number(config_, "initial_accumulator_value");
    l1_ = detail::number(config_, "l1_regularization_strength");
    l2_ = detail::number(config_, "l2_regularization_strength");
    shrinkage_ = detail::number(config_, "l2_shrinkage_regularization_strength");
    beta_ = detail::number(config_, "beta");
    KCPP_CHECK(initial_ >= 0, ValueError, "`initial_accumulator_value` needs to be positive or zero. Received: "
               "initial_accumulator_value=", initial_, ".");
    KCPP_CHECK(power_ <= 0, ValueError, "`learning_rate_power` needs to be negative or zero. Received: "
               "learning_rate_power=", power_, ".");
    KCPP_CHECK(l1_ >= 0, ValueError, "`l1_regularization_strength` needs to be positive or zero. Received: "
               "l1_regularization_strength=", l1_, ".");
    KCPP_CHECK(l2_ >= 0, ValueError, "`l2_regularization_strength` needs to be positive or zero. Received: "
               "l2_regularization_strength=", l2_, ".");
    KCPP_CHECK(shrinkage_ >= 0, ValueError, "`l2_shrinkage_regularization_strength` needs to be positive or zero. "
               "Received: l2_shrinkage_regularization_strength=", shrinkage_, ".");
  }
  std::string class_name() const override { return "Ftrl"; }

 protected:
  void do_build(const std::vector<VariablePtr>& vars) override {
    for (const auto& v : vars) {  // add_optimizer_variables(var_list, ["accumulator", "linear"])
      accumulators_.push_back(add_slot(*v, "accumulator", f32(initial_)));
      linears_.push_back(add_slot(*v, "linear"));
    }
  }
  void update_step(const Tensor& grad, Variable& var, size_t index, float lr, double) override {
    // Float32 throughout, the Python constants rounded where they meet a tensor, as Keras's ops.
    const float l2_reg = f32(l2_) + f32(beta_) / (2.0f * lr);
    const float shrink = f32(2 * shrinkage_), p = f32(-power_), l1 = f32(l1_);
    const float* g = grad.data<float>();
    float* x = var.data<float>();
    float* acc = accumulators_[index]->data<float>();
    float* lin = linears_[index]->data<float>();
    for (int64_t i = 0, n = grad.size(); i < n; ++i) {
      const float grad_to_use = g[i] + shrink * x[i];
      const float new_acc = acc[i] + g[i] * g[i];
      const float new_acc_pow = std::pow(new_acc, p);
      lin[i] += grad_to_use - ((new_acc_pow - std::pow(acc[i], p)) / lr) * x[i];
      const float quadratic = new_acc_pow / lr + 2.0f * l2_reg;
      const float clipped = std::min(std::max(lin[i], -l1), l1);
      x[i] = (clipped - lin[i]) / quadratic;
      acc[i] = new_acc;
    }
    accumulators_[index]->mark_updated();
    linears_[index]->mark_updated();
  }
  Json own_config() const override {
    return detail::pick(config_, {"learning_rate_power", "initial_accumulator_value", "l1_regularization_strength",
                                  "l2_regularization_strength", "l2_shrinkage_regularization_strength", "beta"});
  }

 private:
  double power_, initial_, l1_, l2_, shrinkage_, beta_;
  std::vector<VariablePtr> accumulators_, linears_;
};

}  // namespace

OptimizerPtr detail::make_ftrl(const Json& config) { return std::make_shared<Ftrl>(config); }

}  // namespace kerascpp::optimizers
