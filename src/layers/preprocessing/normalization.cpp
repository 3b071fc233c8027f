// keras.layers.Normalization: (x - mean) / max(sqrt(variance), 1e-7), or its inverse with invert=True
// (keras/src/layers/preprocessing/normalization.py). mean and variance come from the config or, when
// the layer was adapted, from its non-trainable weights mean, variance and count.
#include <cmath>

#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

constexpr float kEpsilon = 1e-7f;  // keras.backend.epsilon()

void flatten_numbers(const Json& j, std::vector<float>* out, Shape* shape, size_t depth) {
  if (j.is_number()) {
    out->push_back(j.get<float>());
    return;
  }
  KCPP_CHECK(j.is_array(), ValueError, "Normalization mean/variance must be numbers or nested lists. Received: ", j.dump());
  if (shape->size() <= depth) shape->push_back(static_cast<int64_t>(j.size()));
  for (const auto& e : j) flatten_numbers(e, out, shape, depth + 1);
}

class Normalization : public Layer {
 public:
  explicit Normalization(Json given)
      : Layer(std::move(given)), invert_(get<bool>(config(), "invert", false)) {
    auto it = config().find("axis");
    axes_ = (it == config().end()) ? std::vector<int>{-1} : int_list(config(), "axis", {});
    has_mean_ = config().contains("mean") && !config()["mean"].is_null();
    KCPP_CHECK(has_mean_ == (config().contains("variance") && !config()["variance"].is_null()), ValueError,
               "Layer '", name(),
               "' (Normalization): when setting `mean`, `variance` must be set too (and vice versa)");
  }
  std::string class_name() const override { return "Normalization"; }
  bool supports_masking() const override { return true; }  // as Keras 3's
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    Tensor mean = has_mean_ ? mean_const_ : mean_->value().reshape(broadcast_);
    Tensor var = has_mean_ ? var_const_ : variance_->value().reshape(broadcast_);
    Tensor sd = ops::binary(ops::BinaryOp::maximum, ops::unary(ops::UnaryOp::sqrt, var),
                            Tensor::from_vector({}, {kEpsilon}));
    if (invert_) return {ops::binary(ops::BinaryOp::add, mean, ops::binary(ops::BinaryOp::multiply, in[0], sd))};
    return {ops::binary(ops::BinaryOp::divide, ops::binary(ops::BinaryOp::subtract, in[0], mean), sd)};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    expect_inputs(in, 1);
    const int ndim = static_cast<int>(in[0].size());
    std::vector<bool> keep(ndim, false);
    for (int a : axes_) keep[ops::normalize_axis(a, ndim)] = true;
    Shape kept;
    broadcast_.assign(ndim, 1);
    for (int d = 0; d < ndim; ++d)
      if (keep[d]) {
        KCPP_CHECK(in[0][d] > 0, ValueError, "Layer '", name(), "' (Normalization): all `axis` values to be kept must have a known shape. Received: inputs.shape=",
                   shape_str(in[0]));
        broadcast_[d] = in[0][d];
        kept.push_back(in[0][d]);
      }
    if (!has_mean_) {
      mean_ = add_weight("mean", kept, false);
      variance_ = add_weight("variance", kept, false);
      add_weight("count", {}, false, DType::int64);
      return;
    }
    mean_const_ = broadcast_constant(config_["mean"], "mean", keep);
    var_const_ = broadcast_constant(config_["variance"], "variance", keep);
  }

 private:
  // Aligns a config mean/variance with the kept axes from the right, as Keras does.
  Tensor broadcast_constant(const Json& j, const char* what, const std::vector<bool>& keep) const {
    std::vector<float> v;
    Shape s;
    flatten_numbers(j, &v, &s, 0);
    Tensor t = Tensor::from_vector(s, v);
    if (s.empty()) return t;
    Shape expanded(broadcast_.size(), 1);
    std::vector<int> kept_axes;
    for (size_t d = 0; d < keep.size(); ++d)
      if (keep[d]) kept_axes.push_back(static_cast<int>(d));
    KCPP_CHECK(s.size() <= kept_axes.size(), ValueError, "Layer '", name(), "' (Normalization): ", what, " of shape ",
               shape_str(s), " does not fit axis ", config_.value("axis", Json()).dump());
    for (size_t i = 1; i <= s.size(); ++i) expanded[kept_axes[kept_axes.size() - i]] = s[s.size() - i];
    return t.reshape(expanded);
  }

  bool invert_, has_mean_;
  std::vector<int> axes_;
  Shape broadcast_;
  VariablePtr mean_, variance_;
  Tensor mean_const_, var_const_;
};

}  // namespace
LayerPtr make_normalization(Json c) { return std::make_shared<Normalization>(std::move(c)); }
}  // namespace kerascpp::layers
