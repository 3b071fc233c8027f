// keras.optimizers.RMSprop (keras/src/optimizers/rmsprop.py): plain, with momentum, centered.
#include <cmath>

#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {
namespace {

using detail::f32;

class RMSprop final : public Optimizer {
 public:
  explicit RMSprop(const Json& config)
      : Optimizer(detail::prepare_config(config, "RMSprop",
                                         {{"learning_rate", 0.001},
                                          {"rho", 0.9},
                                          {"momentum", 0.0},
                                          {"epsilon", 1e-7},
                                          {"centered", false}}),
                  "rm_sprop") {  // Keras's auto_name of "RMSprop"
    rho_ = detail::number(config_, "rho");
    momentum_ = detail::number(config_, "momentum");
    epsilon_ = detail::number(config_, "epsilon");
    KCPP_CHECK(config_["centered"].is_boolean(), ValueError, "`centered` must be a bool. Received: centered=",
               config_["centered"].dump());
    centered_ = config_["centered"].get<bool>();
  }
  std::string class_name() const override { return "RMSprop"; }

 protected:
  void do_build(const std::vector<VariablePtr>& vars) override {
    // Keras's order: all velocities, then all momentums, then all average gradients.
    for (const auto& v : vars) velocities_.push_back(add_slot(*v, "velocity"));
    if (momentum_ > 0)
      for (const auto& v : vars) momentums_.push_back(add_slot(*v, "momentum"));
    if (centered_)
      for (const auto& v : vars) average_gradients_.push_back(add_slot(*v, "average_gradient"));
  }
  void update_step(const Tensor& grad, Variable& var, size_t index, float lr, double) override {
    // rho * x and (1 - rho) * x: Python doubles rounded to float32 against the tensor.
    const float rho = f32(rho_), one_minus_rho = f32(1.0 - rho_), eps = f32(epsilon_), mom = f32(momentum_);
    const float* g = grad.data<float>();
    float* x = var.data<float>();
    float* vel = velocities_[index]->data<float>();
    float* m = momentum_ > 0 ? momentums_[index]->data<float>() : nullptr;
    float* avg = centered_ ? average_gradients_[index]->data<float>() : nullptr;
    for (int64_t i = 0, n = grad.size(); i < n; ++i) {
      vel[i] = rho * vel[i] + one_minus_rho * (g[i] * g[i]);
      float denominator;
      if (avg) {
        avg[i] = rho * avg[i] + one_minus_rho * g[i];
        denominator = vel[i] - avg[i] * avg[i] + eps;
      } else {
        denominator = vel[i] + eps;
      }
      const float increment = (lr * g[i]) / std::sqrt(denominator);
      if (m) {
        m[i] = mom * m[i] + increment;
        x[i] -= m[i];
      } else {
        x[i] -= increment;
      }
    }
    velocities_[index]->mark_updated();
    if (m) momentums_[index]->mark_updated();
    if (avg) average_gradients_[index]->mark_updated();
  }
  Json own_config() const override { return detail::pick(config_, {"rho", "momentum", "epsilon", "centered"}); }

 private:
  double rho_, momentum_, epsilon_;
  bool centered_;
  std::vector<VariablePtr> velocities_, momentums_, average_gradients_;
};

}  // namespace

OptimizerPtr detail::make_rmsprop(const Json& config) { return std::make_shared<RMSprop>(config); }

}  // namespace kerascpp::optimizers
