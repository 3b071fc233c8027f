// keras.layers.LeakyReLU: the slope `negative_slope` (default 0.3; Keras 2's `alpha` is renamed by
// io/dialect_rules.cpp).
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class LeakyReLU : public Layer {
 public:
  explicit LeakyReLU(Json given)
      : Layer(std::move(given)), slope_(get<float>(config(), "negative_slope", 0.3f)) {}
  std::string class_name() const override { return "LeakyReLU"; }
  bool supports_masking() const override { return true; }  // as Keras 3's
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::unary(ops::UnaryOp::leaky_relu, in[0], slope_)};
  }

 private:
  float slope_;
};

}  // namespace
LayerPtr make_leaky_relu(Json c) { return std::make_shared<LeakyReLU>(std::move(c)); }
}  // namespace kerascpp::layers
