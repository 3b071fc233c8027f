// keras.layers.Activation: applies a named activation.
#include "layers/activations/activation_fn.h"
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/plan_parts.h"

namespace kerascpp::layers {
namespace {

class Activation : public Layer {
 public:
  explicit Activation(Json given)
      : Layer(std::move(given)), fn_(require<Json>(config(), "activation"), name()) {}
  std::string class_name() const override { return "Activation"; }
  const ActivationFn& fn() const { return fn_; }
  bool supports_masking() const override { return true; }  // as Keras 3's
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {fn_(in[0])};
  }

 private:
  ActivationFn fn_;
};

}  // namespace
LayerPtr make_activation(Json c) { return std::make_shared<Activation>(std::move(c)); }
const ActivationFn* activation_layer_fn(const Layer& layer) {
  const auto* a = dynamic_cast<const Activation*>(&layer);
  return a ? &a->fn() : nullptr;
}
}  // namespace kerascpp::layers
