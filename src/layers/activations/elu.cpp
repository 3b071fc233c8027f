// keras.layers.ELU: x > 0 ? x : alpha * (exp(x) - 1).
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class ELU : public Layer {
 public:
  explicit ELU(Json given) : Layer(std::move(given)), alpha_(get<float>(config(), "alpha", 1.f)) {}
  std::string class_name() const override { return "ELU"; }
  bool supports_masking() const override { return true; }  // as Keras 3's
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::unary(ops::UnaryOp::elu, in[0], alpha_)};
  }

 private:
  float alpha_;
};

}  // namespace
LayerPtr make_elu(Json c) { return std::make_shared<ELU>(std::move(c)); }
}  // namespace kerascpp::layers
