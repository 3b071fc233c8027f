// keras.layers.Dot: batchwise dot product of two inputs along `axes` (keras/src/layers/merging/dot.py,
// batch_dot). The output is x's shape without the summed axis followed by y's shape without the batch
// and summed axes; a rank-1 result becomes (batch, 1).
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class Dot : public Layer {
 public:
  explicit Dot(Json given)
      : Layer(std::move(given)),
        axes_(int_list(config(), "axes", {})),
        normalize_(get<bool>(config(), "normalize", false)) {
    KCPP_CHECK(
        axes_.size() == 1 || axes_.size() == 2, ValueError, "Invalid `axes` for layer '", name(),
        "': expected an int or a list of 2 ints. Received: axes=", config().value("axes", Json()).dump());
  }
  std::string class_name() const override { return "Dot"; }
  bool supports_masking() const override { return true; }  // as Keras 3's

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    KCPP_CHECK(in.size() == 2, ValueError, "A `Dot` layer ('", name(), "') should be called on a list of 2 inputs. Received: ", in.size(), " inputs");
    auto [a0, a1] = axes(in[0].size(), in[1].size());
    KCPP_CHECK(in[0][a0] < 0 || in[1][a1] < 0 || in[0][a0] == in[1][a1], ValueError, "Incompatible input shapes for layer '", name(),
               "' (Dot): axis values ", in[0][a0], " (at axis ", a0, ") != ", in[1][a1], " (at axis ", a1,
               "). Full input shapes: ", shape_str(in[0]), ", ", shape_str(in[1]));
    Shape out;
    for (int i = 0; i < static_cast<int>(in[0].size()); ++i)
      if (i != a0) out.push_back(in[0][i]);
    for (int i = 1; i < static_cast<int>(in[1].size()); ++i)
      if (i != a1) out.push_back(in[1][i]);
    if (out.size() == 1) out.push_back(1);
    return {out};
  }

  std::vector<Tensor> compute_mask(const std::vector<Tensor>&, const std::vector<Tensor>&) const override {
    return {};  // Keras's Dot.compute_mask: None
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    Shape out = compute_output_shape({in[0].shape(), in[1].shape()})[0];
    auto [a0, a1] = axes(in[0].rank(), in[1].rank());
    Tensor x = normalize_ ? ops::l2_normalize(in[0], a0) : in[0];
    Tensor y = normalize_ ? ops::l2_normalize(in[1], a1) : in[1];
    // x -> (batch, Px, k) with the summed axis last; y -> (batch, k, Py) with it first.
    std::vector<int> px{0}, py{0, a1};
    for (int i = 1; i < x.rank(); ++i)
      if (i != a0) px.push_back(i);
    px.push_back(a0);
    for (int i = 1; i < y.rank(); ++i)
      if (i != a1) py.push_back(i);
    int64_t b = x.dim(0), k = x.dim(a0);
    x = ops::transpose(x, px).reshape({b, -1, k});
    y = ops::transpose(y, py).reshape({b, k, -1});
    out[0] = b;
    return {ops::batch_matmul(x, y).reshape(out)};
  }

 private:
  std::pair<int, int> axes(size_t rx, size_t ry) const {
    int a0 = axes_[0], a1 = axes_.size() == 2 ? axes_[1] : axes_[0];
    a0 = ops::normalize_axis(a0, static_cast<int>(rx));
    a1 = ops::normalize_axis(a1, static_cast<int>(ry));
    KCPP_CHECK(a0 != 0 && a1 != 0, ValueError, "Layer '", name(), "' (Dot) cannot perform batch_dot over axis 0");
    return {a0, a1};
  }
  std::vector<int> axes_;
  bool normalize_;
};

}  // namespace
LayerPtr make_dot(Json c) { return std::make_shared<Dot>(std::move(c)); }
}  // namespace kerascpp::layers
