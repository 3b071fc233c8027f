// keras.optimizers.SGD (keras/src/optimizers/sgd.py): plain, momentum and Nesterov momentum.
#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {
namespace {

using detail::f32;

class SGD final : public Optimizer {
 public:
  explicit SGD(const Json& config)
      : Optimizer(detail::prepare_config(config, "SGD",
                                         {{"learning_rate", 0.01}, {"momentum", 0.0}, {"nesterov", false}}),
                  "sgd") {
    momentum_ = detail::number(config_, "momentum");
    KCPP_CHECK(momentum_ >= 0 && momentum_ <= 1, ValueError, "`momentum` must be a float between [0, 1].");
    KCPP_CHECK(config_["nesterov"].is_boolean(), ValueError, "`nesterov` must be a bool. Received: nesterov=",
               config_["nesterov"].dump());
    nesterov_ = config_["nesterov"].get<bool>();
  }
  std::string class_name() const override { return "SGD"; }

 protected:
  void do_build(const std::vector<VariablePtr>& vars) override {
    if (momentum_ == 0) return;  // no slots without momentum
    for (const auto& v : vars) momentums_.push_back(add_slot(*v, "momentum"));
  }
  void update_step(const Tensor& grad, Variable& var, size_t index, float lr, double step) override {
    update_steps({{grad, &var, index}}, lr, step);
  }
  // Every variable in one pass split between the threads (Optimizer::update_ranges).
  void update_steps(const std::vector<Update>& updates, float lr, double) override {
    const float mom = f32(momentum_);
    update_ranges(updates, [&](size_t k, int64_t b, int64_t e) {
      const float* g = updates[k].grad.data<float>();
      float* x = updates[k].var->data<float>();
      if (momentum_ == 0) {
        for (int64_t i = b; i < e; ++i) x[i] -= g[i] * lr;
        return;
      }
      float* m = momentums_[updates[k].index]->data<float>();
      for (int64_t i = b; i < e; ++i) {
        m[i] = m[i] * mom - g[i] * lr;
        x[i] += nesterov_ ? m[i] * mom - g[i] * lr : m[i];
      }
    });
    if (momentum_ != 0)
      for (const Update& u : updates) momentums_[u.index]->mark_updated();
  }
  Json own_config() const override { return detail::pick(config_, {"momentum", "nesterov"}); }

 private:
  double momentum_;
  bool nesterov_;
  std::vector<VariablePtr> momentums_;
};

}  // namespace

OptimizerPtr detail::make_sgd(const Json& config) { return std::make_shared<SGD>(config); }

}  // namespace kerascpp::optimizers
