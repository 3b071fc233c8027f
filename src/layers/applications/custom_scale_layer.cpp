// CustomScaleLayer of keras.applications.InceptionResNetV2 (keras/src/applications/
// inception_resnet_v2.py): inputs [shortcut, residual] -> shortcut + residual * scale. Keras 3 saves it
// with module "keras.src.applications.inception_resnet_v2" (src/io/config_writer.cpp writes that back);
// tf_keras's InceptionResNetV2 uses a Lambda layer instead, which stays refused (it is code).
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/plan_parts.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class CustomScaleLayer : public Layer {
 public:
  explicit CustomScaleLayer(Json given)
      : Layer(std::move(given)), scale_(require<float>(config(), "scale")) {}
  std::string class_name() const override { return "CustomScaleLayer"; }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 2);
    return {ops::broadcast_shape(in[0], in[1])};
  }

  // x: [shortcut, residual], both (batch, ..., channels)
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::binary(ops::BinaryOp::add, in[0], ops::scale_shift(in[1], scale_, 0.f))};
  }

  float scale() const { return scale_; }

 private:
  float scale_;
};

}  // namespace
LayerPtr make_custom_scale_layer(Json c) { return std::make_shared<CustomScaleLayer>(std::move(c)); }

bool custom_scale_parts(const Layer& layer, float* scale) {
  const auto* l = dynamic_cast<const CustomScaleLayer*>(&layer);
  if (l) *scale = l->scale();
  return l != nullptr;
}
}  // namespace kerascpp::layers
