// LayerScale of keras.applications.ConvNeXt* (keras/src/applications/convnext.py): x * gamma along the
// last axis, gamma: (projection_dim,). Keras creates the variable without a name, so it is called
// "variable" (its name in Keras 3 files). Module "keras.src.applications.convnext" in saved configs.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class LayerScale : public Layer {
 public:
  explicit LayerScale(Json given)
      : Layer(std::move(given)), projection_dim_(require<int64_t>(config(), "projection_dim")) {
    KCPP_CHECK(projection_dim_ > 0, ValueError, "Layer '", name(),
               "' (LayerScale) expects a positive `projection_dim`. Received: projection_dim=", projection_dim_);
  }
  std::string class_name() const override { return "LayerScale"; }
  Json initializer_for(const std::string&) const override {  // Keras: Constant(init_values)
    return {{"class_name", "Constant"}, {"config", {{"value", config_.value("init_values", Json(0.0))}}}};
  }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return {ops::broadcast_shape(in[0], {projection_dim_})};
  }

  // x: (batch, ..., projection_dim)
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::binary(ops::BinaryOp::multiply, in[0], gamma_->value())};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    expect_inputs(in, 1);
    gamma_ = add_weight("variable", {projection_dim_});
  }

 private:
  int64_t projection_dim_;
  VariablePtr gamma_;
};

}  // namespace
LayerPtr make_layer_scale(Json c) { return std::make_shared<LayerScale>(std::move(c)); }
}  // namespace kerascpp::layers
