// keras.layers.Concatenate: joins a list of inputs along `axis` (default -1); other dims must match.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class Concatenate : public Layer {
 public:
  explicit Concatenate(const Json& config) : Layer(config), axis_(get<int>(config, "axis", -1)) {}
  std::string class_name() const override { return "Concatenate"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    KCPP_CHECK(in.size() >= 1, ValueError, "A `Concatenate` layer ('", name(), "') should be called on a list of inputs.");
    int rank = static_cast<int>(in[0].size());
    int axis = ops::normalize_axis(axis_, rank);
    Shape out = in[0];
    for (size_t i = 1; i < in.size(); ++i) {
      bool ok = static_cast<int>(in[i].size()) == rank;
      for (int d = 0; ok && d < rank; ++d)
        if (d != axis && in[i][d] >= 0 && out[d] >= 0 && in[i][d] != out[d]) ok = false;
      KCPP_CHECK(ok, ValueError, "A `Concatenate` layer ('", name(), "') requires inputs with matching shapes except for the concatenation axis. Received: input_shape=",
                 shape_str(in[0]), " and ", shape_str(in[i]));
      out[axis] = (out[axis] < 0 || in[i][axis] < 0) ? -1 : out[axis] + in[i][axis];
      for (int d = 0; d < rank; ++d)
        if (out[d] < 0) out[d] = in[i][d];
    }
    return {out};
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::concatenate(in, axis_)};
  }

 private:
  int axis_;
};

}  // namespace
LayerPtr make_concatenate(const Json& c) { return std::make_shared<Concatenate>(c); }
}  // namespace kerascpp::layers
