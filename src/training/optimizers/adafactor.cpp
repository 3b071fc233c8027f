// keras.optimizers.Adafactor (keras/src/optimizers/adafactor.py): second moments kept factored for
// variables of rank 2 and more (a row and a column average per matrix), a step size relative to the
// variable's RMS, and the update clipped by its own RMS.
#include <algorithm>
#include <cmath>

#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {
namespace {

using detail::f32;

float rms(const float* x, int64_t n) {  // sqrt(mean(square(x))) in float32
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i] * x[i];
  return std::sqrt(s / static_cast<float>(n));
}

class Adafactor final : public Optimizer {
 public:
  explicit Adafactor(const Json& config)
      : Optimizer(detail::prepare_config(config, "Adafactor",
                                         {{"learning_rate", 0.001}, {"beta_2_decay", -0.8}, {"epsilon_1", 1e-30},
                                          {"epsilon_2", 1e-3}, {"clip_threshold", 1.0}, {"relative_step", true}}),
                  "adafactor") {
    decay_ = detail::number(config_, "beta_2_decay");
    epsilon_1_ = detail::number(config_, "epsilon_1");
    epsilon_2_ = detail::number(config_, "epsilon_2");
    clip_threshold_ = detail::number(config_, "clip_threshold");
    KCPP_CHECK(config_["relative_step"].is_boolean(), ValueError,
               "`relative_step` must be a bool. Received: relative_step=", config_["relative_step"].dump());
    relative_step_ = config_["relative_step"].get<bool>();
  }
  std::string class_name() const override { return "Adafactor"; }

 protected:
  void do_build(const std::vector<VariablePtr>& vars) override {
    for (const auto& v : vars) {
      const Shape& s = v->shape();
      if (s.size() < 2) {  // backend.Variable(0, name=var.name): unused int32 scalars, tracked all the same
        rows_.push_back(add_variable(v->name(), {}, 0.f, DType::int32));
        cols_.push_back(add_variable(v->name(), {}, 0.f, DType::int32));
      } else {
        Shape r(s.begin(), s.end() - 1), c(s.begin(), s.end() - 2);
        c.push_back(s.back());
        rows_.push_back(add_variable(v->name(), r, 0.f));
        cols_.push_back(add_variable(v->name(), c, 0.f));
      }
      velocities_.push_back(add_slot(*v, "velocity"));
    }
  }
  void update_step(const Tensor& grad, Variable& var, size_t index, float lr, double step) override {
    const float local_step = f32(step), inv_sqrt_step = 1.0f / std::sqrt(local_step);
    if (!has_schedule() && relative_step_) lr = std::min(lr, inv_sqrt_step);
    const float rho = std::min(lr, inv_sqrt_step);
    const int64_t n = grad.size();
    const float* g = grad.data<float>();
    float* x = var.data<float>();
    float* v = velocities_[index]->data<float>();
    const float alpha = std::max(f32(epsilon_2_), rms(x, n)) * rho;
    const float eps_1 = f32(epsilon_1_);
    const float beta = 1.0f - std::pow(local_step, f32(decay_)), one_minus_beta = 1.0f - beta;
    const Shape& s = var.shape();
    if (s.size() >= 2) {
      const int64_t cols = s.back(), rows = s[s.size() - 2], blocks = n / std::max<int64_t>(rows * cols, 1);
      float* r = rows_[index]->data<float>();
      float* c = cols_[index]->data<float>();
      for (int64_t b = 0; b < blocks; ++b) {
        const float* gb = g + b * rows * cols;
        float* rb = r + b * rows;
        float* cb = c + b * cols;
        for (int64_t i = 0; i < rows; ++i) {  // mean over the last axis
          float sum = 0;
          for (int64_t j = 0; j < cols; ++j) sum += gb[i * cols + j] * gb[i * cols + j] + eps_1;
          rb[i] = beta * rb[i] + one_minus_beta * (sum / static_cast<float>(cols));
        }
        for (int64_t j = 0; j < cols; ++j) {  // mean over the axis before it
          float sum = 0;
          for (int64_t i = 0; i < rows; ++i) sum += gb[i * cols + j] * gb[i * cols + j] + eps_1;
          cb[j] = beta * cb[j] + one_minus_beta * (sum / static_cast<float>(rows));
        }
        float r_mean = 0;
        for (int64_t i = 0; i < rows; ++i) r_mean += rb[i];
        r_mean /= static_cast<float>(rows);
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) v[b * rows * cols + i * cols + j] = (rb[i] / r_mean) * cb[j];
      }
      rows_[index]->mark_updated();
      cols_[index]->mark_updated();
    } else {
      for (int64_t i = 0; i < n; ++i) v[i] = beta * v[i] + one_minus_beta * (g[i] * g[i] + eps_1);
    }
    std::vector<float> u(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) u[i] = g[i] / std::sqrt(v[i]);
    const float scale = std::max(1.0f, rms(u.data(), n) / f32(clip_threshold_));
    for (int64_t i = 0; i < n; ++i) x[i] -= alpha * (u[i] / scale);
    velocities_[index]->mark_updated();
  }
  Json own_config() const override {
    return detail::pick(config_, {"beta_2_decay", "epsilon_1", "epsilon_2", "clip_threshold", "relative_step"});
  }

 private:
  double decay_, epsilon_1_, epsilon_2_, clip_threshold_;
  bool relative_step_ = true;
  std::vector<VariablePtr> rows_, cols_, velocities_;
};

}  // namespace

OptimizerPtr detail::make_adafactor(const Json& config) { return std::make_shared<Adafactor>(config); }

}  // namespace kerascpp::optimizers
