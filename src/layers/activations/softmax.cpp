// keras.layers.Softmax over one axis (default -1).
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class Softmax : public Layer {
 public:
  explicit Softmax(const Json& config) : Layer(config) {
    auto axes = int_list(config, "axis", {-1});
    KCPP_CHECK(axes.size() == 1, NotImplementedError, "Layer '", name(),
               "' (Softmax): softmax over several axes is not supported. Received: axis=", config["axis"].dump());
    axis_ = axes[0];
  }
  std::string class_name() const override { return "Softmax"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    ops::normalize_axis(axis_, static_cast<int>(in[0].size()));
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::softmax(in[0], axis_)};
  }

 private:
  int axis_;
};

}  // namespace
LayerPtr make_softmax(const Json& c) { return std::make_shared<Softmax>(c); }
}  // namespace kerascpp::layers
