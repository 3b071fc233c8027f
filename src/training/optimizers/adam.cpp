// keras.optimizers.Adam (keras/src/optimizers/adam.py), with amsgrad.
#include "training/optimizers/adam.h"

#include <algorithm>
#include <cmath>

#include "kernels/parallel.h"

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

// Keras's update on [0, n), element by element (the buffers never overlap, so the loop vectorises:
// IEEE sqrt and division give each element's bits as the scalar loop would; no FMA, see CMakeLists).
template <bool kAmsgrad>
void adam_update(const float* __restrict g, float* __restrict x, float* __restrict m, float* __restrict v,
                 float* __restrict vhat, int64_t n, float one_minus_b1, float one_minus_b2, float alpha, float eps) {
  for (int64_t i = 0; i < n; ++i) {
    m[i] += (g[i] - m[i]) * one_minus_b1;
    v[i] += (g[i] * g[i] - v[i]) * one_minus_b2;
    float vi = v[i];
    if constexpr (kAmsgrad) vi = vhat[i] = std::max(vhat[i], v[i]);
    x[i] -= (m[i] * alpha) / (std::sqrt(vi) + eps);
  }
}

}  // namespace

void Adam::update_step(const Tensor& grad, Variable& var, size_t index, float lr, double step) {
  const float local_step = f32(step);
  const float beta_1_power = std::pow(f32(beta_1_), local_step);
  const float beta_2_power = std::pow(f32(beta_2_), local_step);
  const float alpha = lr * std::sqrt(1.f - beta_2_power) / (1.f - beta_1_power);
  // `1 - self.beta_1` is a Python double, rounded to float32 when it meets the tensor.
  const float one_minus_b1 = f32(1.0 - beta_1_), one_minus_b2 = f32(1.0 - beta_2_), eps = f32(epsilon_);
  const float* g = grad.data<float>();
  float* x = var.data<float>();
  float* m = momentums_[index]->data<float>();
  float* v = velocities_[index]->data<float>();
  float* vhat = amsgrad_ ? velocity_hats_[index]->data<float>() : nullptr;
  // Split between the engine's threads (kernels/parallel.h) when big; each element as on one thread.
  kernels::parallel_chunks(grad.size(), kernels::kElementwiseGrain, [&](int64_t b, int64_t e) {
    if (vhat)
      adam_update<true>(g + b, x + b, m + b, v + b, vhat + b, e - b, one_minus_b1, one_minus_b2, alpha, eps);
    else
      adam_update<false>(g + b, x + b, m + b, v + b, nullptr, e - b, one_minus_b1, one_minus_b2, alpha, eps);
  });
  momentums_[index]->mark_updated();
  velocities_[index]->mark_updated();
  if (vhat) velocity_hats_[index]->mark_updated();
}

OptimizerPtr make_adam(const Json& config) { return std::make_shared<Adam>(config); }

}  // namespace kerascpp::optimizers::detail
