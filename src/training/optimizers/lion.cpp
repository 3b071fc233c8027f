// keras.optimizers.Lion (keras/src/optimizers/lion.py): sign of an interpolated momentum.
#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {
namespace {

using detail::f32;

class Lion final : public Optimizer {
 public:
  explicit Lion(const Json& config)
      : Optimizer(detail::prepare_config(config, "Lion", {{"learning_rate", 0.001}, {"beta_1", 0.9}, {"beta_2", 0.99}}),
                  "lion") {
    beta_1_ = detail::number(config_, "beta_1");
    beta_2_ = detail::number(config_, "beta_2");
    KCPP_CHECK(beta_1_ > 0 && beta_1_ <= 1, ValueError,
               "Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer degenerates to "
               "SignSGD. Received: beta_1=", beta_1_, ".");
  }
  std::string class_name() const override { return "Lion"; }

 protected:
  void do_build(const std::vector<VariablePtr>& vars) override {
    for (const auto& v : vars) momentums_.push_back(add_slot(*v, "momentum"));
  }
  void update_step(const Tensor& grad, Variable& var, size_t index, float lr, double) override {
    // beta_1 / beta_2 are cast to float32 first, so (1.0 - beta) is a float32 subtraction.
    const float b1 = f32(beta_1_), b2 = f32(beta_2_), one_minus_b1 = 1.0f - b1, one_minus_b2 = 1.0f - b2;
    const float* g = grad.data<float>();
    float* x = var.data<float>();
    float* m = momentums_[index]->data<float>();
    for (int64_t i = 0, n = grad.size(); i < n; ++i) {
      const float c = m[i] * b1 + g[i] * one_minus_b1;
      const float sign = c > 0.f ? 1.f : (c < 0.f ? -1.f : 0.f);
      x[i] -= lr * sign;
      m[i] = m[i] * b2 + g[i] * one_minus_b2;
    }
    momentums_[index]->mark_updated();
  }
  Json own_config() const override { return detail::pick(config_, {"beta_1", "beta_2"}); }

 private:
  double beta_1_, beta_2_;
  std::vector<VariablePtr> momentums_;
};

}  // namespace

OptimizerPtr detail::make_lion(const Json& config) { return std::make_shared<Lion>(config); }

}  // namespace kerascpp::optimizers
