// keras.layers.ReLU: max_value, negative_slope and threshold as keras.activations.relu.
#include <limits>

#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/plan_parts.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class ReLU : public Layer {
 public:
  explicit ReLU(Json given)
      : Layer(std::move(given)),
        max_value_(get<float>(config(), "max_value", std::numeric_limits<float>::infinity())),
        negative_slope_(get<float>(config(), "negative_slope", 0.f)),
        threshold_(get<float>(config(), "threshold", 0.f)) {
    KCPP_CHECK(max_value_ >= 0 && negative_slope_ >= 0, ValueError, "Invalid config of layer '", name(),
               "' (ReLU): max_value and negative_slope must be >= 0. Received: max_value=", max_value_,
               ", negative_slope=", negative_slope_);
  }
  std::string class_name() const override { return "ReLU"; }
  ReluParts parts() const { return {max_value_, negative_slope_, threshold_}; }
  bool supports_masking() const override { return true; }  // as Keras 3's
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::relu(in[0], negative_slope_, max_value_, threshold_)};
  }

 private:
  float max_value_, negative_slope_, threshold_;
};

}  // namespace
LayerPtr make_relu(Json c) { return std::make_shared<ReLU>(std::move(c)); }
bool relu_parts(const Layer& layer, ReluParts* parts) {
  const auto* r = dynamic_cast<const ReLU*>(&layer);
  if (r) *parts = r->parts();
  return r != nullptr;
}
}  // namespace kerascpp::layers
