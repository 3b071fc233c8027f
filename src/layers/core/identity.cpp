// keras.layers.Identity: returns its input, mask included.
#include "layers/layer_list.h"
#include "layers/plan_parts.h"

namespace kerascpp::layers {
namespace {

class Identity : public Layer {
 public:
  using Layer::Layer;
  std::string class_name() const override { return "Identity"; }
  bool supports_masking() const override { return true; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override { return in; }
};

}  // namespace
LayerPtr make_identity(Json c) { return std::make_shared<Identity>(std::move(c)); }
bool is_identity_layer(const Layer& layer) { return dynamic_cast<const Identity*>(&layer) != nullptr; }
}  // namespace kerascpp::layers
