// keras.layers.Dense: y = activation(x @ kernel + bias), applied on the last axis.
// x: (batch, ..., in) -> (batch, ..., units); kernel: (in, units); bias: (units,)
#include "layers/activations/activation_fn.h"
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/plan_parts.h"

namespace kerascpp::layers {
namespace {

class Dense : public Layer {
 public:
  explicit Dense(Json given)
      : Layer(std::move(given)),
        units_(require<int64_t>(config(), "units")),
        use_bias_(get<bool>(config(), "use_bias", true)),
        activation_(config().value("activation", Json("linear")), name()) {
    KCPP_CHECK(units_ > 0, ValueError, "Received an invalid value for `units` of layer '", name(),
               "', expected a positive integer. Received: units=", units_);
  }
  std::string class_name() const override { return "Dense"; }
  DenseParts parts() const { return {kernel_, bias_, &activation_}; }
  bool supports_masking() const override { return true; }  // as Keras 3's

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    KCPP_CHECK(!in[0].empty(), ValueError, "Layer '", name(), "' (Dense) expects an input of rank >= 1. Received: shape=", shape_str(in[0]));
    if (kernel_)
      KCPP_CHECK(in[0].back() == kernel_->shape()[0], ValueError, "Input 0 of layer '", name(),
                 "' is incompatible with the layer: expected axis -1 of input shape to have value ",
                 kernel_->shape()[0], ", but received input with shape ", shape_str(in[0]));
    Shape out = in[0];
    out.back() = units_;
    return {out};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    Tensor y = ops::matmul(in[0], kernel_->value());
    if (use_bias_) y = ops::bias_add(y, bias_->value());
    return {activation_(y)};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    expect_inputs(in, 1);
    KCPP_CHECK(!in[0].empty() && in[0].back() > 0, ValueError, "Layer '", name(),
               "' (Dense) needs a known last input dimension. Received: input_shape=", shape_str(in[0]));
    kernel_ = add_weight("kernel", {in[0].back(), units_});
    if (use_bias_) bias_ = add_weight("bias", {units_});
  }

 private:
  int64_t units_;
  bool use_bias_;
  ActivationFn activation_;
  VariablePtr kernel_, bias_;
};

}  // namespace
LayerPtr make_dense(Json c) { return std::make_shared<Dense>(std::move(c)); }
bool dense_parts(const Layer& layer, DenseParts* parts) {
  const auto* dense = dynamic_cast<const Dense*>(&layer);
  if (dense) *parts = dense->parts();
  return dense != nullptr;
}
}  // namespace kerascpp::layers
