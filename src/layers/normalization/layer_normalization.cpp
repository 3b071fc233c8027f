// keras.layers.LayerNormalization: per sample (and per position of the axes not normalised), mean
// and variance over `axis` (an int or a list); y = (x - mean) / sqrt(variance + epsilon) * gamma + beta
// (keras/src/layers/normalization/layer_normalization.py, keras/src/ops/nn.py _layer_normalization).
//
// Variables: gamma (scale=True or rms_scaling=True), beta (center=True and not rms_scaling), of shape
// tuple(input_shape[a] for a in sorted(axis)), sorted as configured (negative axes first), which
// Keras then reshapes, not transposes, to the broadcast shape: the values are read in row-major
// order of the normalised axes whatever their saved shape. rms_scaling (Keras 3, deprecated there)
// divides by sqrt(variance + epsilon) without centring: Keras's own formula, kept as it is.
#include <algorithm>

#include "layers/layer_list.h"
#include "layers/plan_parts.h"
#include "layers/normalization/axes.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class LayerNormalization : public Layer {
 public:
  explicit LayerNormalization(Json given)
      : Layer(std::move(given)),
        axis_(int_list(config(), "axis", {-1})),
        epsilon_(get<float>(config(), "epsilon", 1e-3f)),
        center_(get<bool>(config(), "center", true)),
        scale_(get<bool>(config(), "scale", true)),
        rms_scaling_(get<bool>(config(), "rms_scaling", false)) {
    KCPP_CHECK(!axis_.empty(), ValueError, "Layer '", name(), "' (LayerNormalization): `axis` must not be empty. Received: axis=[]");
  }
  std::string class_name() const override { return "LayerNormalization"; }
  LayerNormParts parts() const {
    std::vector<int> axes = axes_;
    std::sort(axes.begin(), axes.end());
    return {gamma_, beta_, axes, epsilon_, rms_scaling_};
  }
  bool supports_masking() const override { return true; }  // as Keras 3's

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    checked_axes(*this, config_, axis_, in[0]);
    return in;
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    auto flat = [](const VariablePtr& v) { return v ? v->value().reshape({v->value().size()}) : Tensor(); };
    return {ops::layer_normalization(in[0], flat(gamma_), flat(beta_), axes_, epsilon_, rms_scaling_)};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    expect_inputs(in, 1);
    axes_ = checked_axes(*this, config_, axis_, in[0]);
    require_known_dims(*this, config_, axes_, in[0]);
    std::vector<int> raw = axis_;
    std::sort(raw.begin(), raw.end());  // Keras sorts the configured values, not the normalised ones
    Shape param;
    const int rank = static_cast<int>(in[0].size());
    for (int a : raw) param.push_back(in[0][a < 0 ? a + rank : a]);
    if (scale_ || rms_scaling_) gamma_ = add_weight("gamma", param);
    if (center_ && !rms_scaling_) beta_ = add_weight("beta", param);
  }

 private:
  std::vector<int> axis_;
  float epsilon_;
  bool center_, scale_, rms_scaling_;
  std::vector<int> axes_;  // normalised (after build)
  VariablePtr gamma_, beta_;
};

}  // namespace
LayerPtr make_layer_normalization(Json c) { return std::make_shared<LayerNormalization>(std::move(c)); }
bool layer_norm_parts(const Layer& layer, LayerNormParts* parts) {
  const auto* ln = dynamic_cast<const LayerNormalization*>(&layer);
  if (ln) *parts = ln->parts();
  return ln != nullptr;
}
}  // namespace kerascpp::layers
