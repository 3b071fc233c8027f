// keras.layers.RMSNormalization(axis=-1, epsilon=1e-6): x * rsqrt(mean(x^2, axis) + epsilon) * scale
// (keras/src/ops/nn.py _rms_normalization), scale (one weight per position of the axes, ones at
// first). No centring, no offset.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class RMSNormalization : public Layer {
 public:
  explicit RMSNormalization(Json given)
      : Layer(std::move(given)),
        axes_(int_list(config(), "axis", {-1})),
        epsilon_(get<float>(config(), "epsilon", 1e-6f)) {}
  std::string class_name() const override { return "RMSNormalization"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    for (int a : axes_) ops::normalize_axis(a, static_cast<int>(in[0].size()));
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    const Tensor& x = in[0];
    std::vector<int> axes = sorted_axes(x.rank());
    const Tensor ms = ops::reduce_mean(ops::unary(ops::UnaryOp::square, x), axes, true);
    const Tensor rms = ops::unary(ops::UnaryOp::sqrt, ops::scale_shift(ms, 1.f, epsilon_));
    Tensor y = ops::binary(ops::BinaryOp::divide, x, rms);
    Shape scale_shape(x.rank(), 1);  // the scale laid along its axes
    for (int a : axes) scale_shape[a] = x.dim(a);
    return {ops::binary(ops::BinaryOp::multiply, y, scale_->value().reshape(scale_shape))};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    expect_inputs(in, 1);
    Shape s;
    for (int a : sorted_axes(static_cast<int>(in[0].size()))) {
      KCPP_CHECK(in[0][a] > 0, ValueError, "Layer '", name(), "' (RMSNormalization) needs a known size for axis ", a,
                 ". Received: input_shape=", shape_str(in[0]));
      s.push_back(in[0][a]);
    }
    scale_ = add_weight("scale", s);
  }

 private:
  std::vector<int> sorted_axes(int rank) const {
    std::vector<int> axes;
    for (int a : axes_) axes.push_back(ops::normalize_axis(a, rank));
    std::sort(axes.begin(), axes.end());
    return axes;
  }
  std::vector<int> axes_;
  float epsilon_;
  VariablePtr scale_;
};

}  // namespace
LayerPtr make_rms_normalization(Json c) { return std::make_shared<RMSNormalization>(std::move(c)); }
}  // namespace kerascpp::layers
