// keras.layers.Softmax over one axis (default -1).
#include "layers/attention/attention_masks.h"
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class Softmax : public Layer {
 public:
  explicit Softmax(Json given) : Layer(std::move(given)) {
    auto axes = int_list(config(), "axis", {-1});
    KCPP_CHECK(
        axes.size() == 1, NotImplementedError, "Layer '", name(),
        "' (Softmax): softmax over several axes is not supported. Received: axis=", config()["axis"].dump());
    axis_ = axes[0];
  }
  std::string class_name() const override { return "Softmax"; }
  bool supports_masking() const override { return true; }  // as Keras 3's
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    ops::normalize_axis(axis_, static_cast<int>(in[0].size()));
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override {
    const Tensor mask = ctx.mask(0);
    if (!mask.defined()) return {ops::softmax(in[0], axis_)};
    // Masked positions (mask broadcast against the input, numpy style) are sent to -1e9; Keras 3 then
    // zeroes them (a fully masked row comes out zeros), tf_keras leaves them.
    const int rank = in[0].rank(), axis = ops::normalize_axis(axis_, rank);
    KCPP_CHECK(axis == rank - 1, NotImplementedError, "Layer '", name(), "' (Softmax): a mask with a softmax over "
               "axis ", axis_, " (not the last) is not supported");
    return {masked_softmax(in[0], mask, 1, keras2_semantics() ? MaskedRows::uniform : MaskedRows::zero)};
  }

 private:
  int axis_;
};

}  // namespace
LayerPtr make_softmax(Json c) { return std::make_shared<Softmax>(std::move(c)); }
}  // namespace kerascpp::layers
