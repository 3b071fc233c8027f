// keras.optimizers.Adagrad (keras/src/optimizers/adagrad.py).
#include <cmath>

#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {
namespace {

using detail::f32;

class Adagrad final : public Optimizer {
 public:
  explicit Adagrad(const Json& config)
      : Optimizer(detail::prepare_config(
                      config, "Adagrad",
                      {{"learning_rate", 0.001}, {"initial_accumulator_value", 0.1}, {"epsilon", 1e-7}}),
                  "adagrad") {
    initial_ = detail::number(config_, "initial_accumulator_value");
    epsilon_ = detail::number(config_, "epsilon");
  }
  std::string class_name() const override { return "Adagrad"; }

 protected:
  void do_build(const std::vector<VariablePtr>& vars) override {
    // initializers.Constant(initial_accumulator_value), in the variable's float32.
    for (const auto& v : vars) accumulators_.push_back(add_slot(*v, "accumulator", f32(initial_)));
  }
  void update_step(const Tensor& grad, Variable& var, size_t index, float lr, double) override {
    const float eps = f32(epsilon_);
    const float* g = grad.data<float>();
    float* x = var.data<float>();
    float* acc = accumulators_[index]->data<float>();
    for (int64_t i = 0, n = grad.size(); i < n; ++i) {
      acc[i] += g[i] * g[i];
      x[i] -= (lr * g[i]) / std::sqrt(acc[i] + eps);
    }
    accumulators_[index]->mark_updated();
  }
  Json own_config() const override { return detail::pick(config_, {"initial_accumulator_value", "epsilon"}); }

 private:
  double initial_, epsilon_;
  std::vector<VariablePtr> accumulators_;
};

}  // namespace

OptimizerPtr detail::make_adagrad(const Json& config) { return std::make_shared<Adagrad>(config); }

}  // namespace kerascpp::optimizers
