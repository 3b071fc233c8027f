// keras.layers.Permute: dims are 1-based and exclude the batch axis: Permute((2, 1)) swaps the two
// non-batch axes of a rank-3 input.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class Permute : public Layer {
 public:
  explicit Permute(Json given) : Layer(std::move(given)) {
    perm_ = {0};
    for (int d : int_list(config(), "dims", {})) perm_.push_back(d);
    std::vector<int> sorted(perm_.begin(), perm_.end());
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
      KCPP_CHECK(sorted[i] == static_cast<int>(i), ValueError,
                 "Invalid permutation argument `dims` for layer '", name(),
                 "'. `dims` should be a permutation of 1..n. Received: dims=",
                 config().value("dims", Json()).dump());
  }
  std::string class_name() const override { return "Permute"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    KCPP_CHECK(in[0].size() == perm_.size(), ValueError, "Layer '", name(), "' (Permute) expects an input of rank ",
               perm_.size(), ". Received: shape=", shape_str(in[0]));
    Shape out;
    for (int p : perm_) out.push_back(in[0][p]);
    return {out};
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::transpose(in[0], perm_)};
  }

 private:
  std::vector<int> perm_;
};

}  // namespace
LayerPtr make_permute(Json c) { return std::make_shared<Permute>(std::move(c)); }
}  // namespace kerascpp::layers
