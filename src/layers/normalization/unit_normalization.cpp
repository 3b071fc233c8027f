// keras.layers.UnitNormalization: x / ||x||_2 over `axis` (an int or a list); no weights.
// Keras 3 computes x * min(rsqrt(sum(x^2)), 1 / 1e-12) (keras/src/ops/nn.py _normalize with
// epsilon=1e-12), which is x / sqrt(max(sum(x^2), 1e-24)): l2_normalize with epsilon 1e-24.
// (tf_keras uses tf.math.l2_normalize with 1e-12 under the root; the two differ only for vectors
// whose squared norm is below 1e-12.)
#include "layers/layer_list.h"
#include "layers/normalization/axes.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

constexpr float kSquaredNormFloor = 1e-24f;  // (Keras's epsilon 1e-12)^2

class UnitNormalization : public Layer {
 public:
  explicit UnitNormalization(Json given) : Layer(std::move(given)), axis_(int_list(config(), "axis", {-1})) {
    KCPP_CHECK(!axis_.empty(), ValueError, "Layer '", name(), "' (UnitNormalization): `axis` must not be empty. Received: axis=[]");
  }
  std::string class_name() const override { return "UnitNormalization"; }
  bool supports_masking() const override { return true; }  // as Keras 3's

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    checked_axes(*this, config_, axis_, in[0]);
    return in;
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::l2_normalize(in[0], checked_axes(*this, config_, axis_, in[0].shape()), kSquaredNormFloor)};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override { compute_output_shape(in); }  // checks the axes

 private:
  std::vector<int> axis_;
};

}  // namespace
LayerPtr make_unit_normalization(Json c) { return std::make_shared<UnitNormalization>(std::move(c)); }
}  // namespace kerascpp::layers
