// keras.layers.Flatten: (batch, d1, ..., dn) -> (batch, d1*...*dn); channels_first inputs are first
// moved to channels_last, as keras/src/layers/reshaping/flatten.py does.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/plan_parts.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class Flatten : public Layer {
 public:
  explicit Flatten(Json given)
      : Layer(std::move(given)),
        channels_first_(get<std::string>(config(), "data_format", "channels_last") == "channels_first") {}
  std::string class_name() const override { return "Flatten"; }
  bool channels_first() const { return channels_first_; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    KCPP_CHECK(!in[0].empty(), ValueError, "Layer '", name(), "' (Flatten) expects an input with a batch axis. Received: shape=()");
    int64_t n = 1;
    for (size_t i = 1; i < in[0].size(); ++i) n = (n < 0 || in[0][i] < 0) ? -1 : n * in[0][i];
    return {{in[0][0], n}};
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    Tensor x = in[0];
    if (channels_first_ && x.rank() > 2) {
      std::vector<int> perm{0};
      for (int i = 2; i < x.rank(); ++i) perm.push_back(i);
      perm.push_back(1);
      x = ops::transpose(x, perm);
    }
    return {x.reshape({x.dim(0), x.rank() > 1 ? -1 : 1})};
  }

 private:
  bool channels_first_;
};

}  // namespace
LayerPtr make_flatten(Json c) { return std::make_shared<Flatten>(std::move(c)); }
bool flatten_is_view(const Layer& layer, const Shape& input) {
  const auto* f = dynamic_cast<const Flatten*>(&layer);
  return f && (!f->channels_first() || input.size() <= 2);
}
}  // namespace kerascpp::layers
