// keras.layers.PReLU: max(x, 0) + alpha * min(x, 0); alpha: input_shape[1:] with each shared axis 1.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class PReLU : public Layer {
 public:
  explicit PReLU(Json given) : Layer(std::move(given)), shared_axes_(int_list(config(), "shared_axes", {})) {}
  std::string class_name() const override { return "PReLU"; }
  bool supports_masking() const override { return true; }  // as Keras 3's
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::prelu(in[0], alpha_->value())};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    expect_inputs(in, 1);
    Shape s(in[0].begin() + 1, in[0].end());
    for (int a : shared_axes_) {
      KCPP_CHECK(a >= 1 && a <= static_cast<int>(s.size()), ValueError, "Invalid shared_axes ", a, " for layer '",
                 name(), "' with input shape ", shape_str(in[0]));
      s[a - 1] = 1;
    }
    alpha_ = add_weight("alpha", s);
  }

 private:
  std::vector<int> shared_axes_;
  VariablePtr alpha_;
};

}  // namespace
LayerPtr make_prelu(Json c) { return std::make_shared<PReLU>(std::move(c)); }
}  // namespace kerascpp::layers
