// keras.layers.RepeatVector: (batch, features) -> (batch, n, features).
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class RepeatVector : public Layer {
 public:
  explicit RepeatVector(Json given) : Layer(std::move(given)), n_(require<int64_t>(config(), "n")) {
    KCPP_CHECK(n_ >= 0, ValueError, "Invalid `n` for layer '", name(), "'. Received: n=", n_);
  }
  std::string class_name() const override { return "RepeatVector"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    KCPP_CHECK(in[0].size() == 2, ValueError, "Layer '", name(), "' (RepeatVector) expects an input of rank 2. Received: shape=",
               shape_str(in[0]));
    return {{in[0][0], n_, in[0][1]}};
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::tile(in[0].reshape({in[0].dim(0), 1, in[0].dim(1)}), {1, n_, 1})};
  }

 private:
  int64_t n_;
};

}  // namespace
LayerPtr make_repeat_vector(Json c) { return std::make_shared<RepeatVector>(std::move(c)); }
}  // namespace kerascpp::layers
