// keras.layers.Reshape: (batch, ...) -> (batch, *target_shape); one target dim may be -1.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/plan_parts.h"

namespace kerascpp::layers {
namespace {

class Reshape : public Layer {
 public:
  explicit Reshape(Json given) : Layer(std::move(given)) {
    target_ = shape_from_json(require<Json>(config(), "target_shape"),
                              "the target_shape of layer '" + name() + "'");
  }
  std::string class_name() const override { return "Reshape"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    Shape out{in[0].empty() ? -1 : in[0][0]};
    int64_t known_in = 1, known_out = 1;
    int unknown = -1;
    for (size_t i = 1; i < in[0].size(); ++i) known_in = (known_in < 0 || in[0][i] < 0) ? -1 : known_in * in[0][i];
    for (size_t i = 0; i < target_.size(); ++i) {
      if (target_[i] < 0) unknown = static_cast<int>(i); else known_out *= target_[i];
      out.push_back(target_[i]);
    }
    if (known_in >= 0) {
      bool ok = unknown < 0 ? known_in == known_out : (known_out > 0 && known_in % known_out == 0);
      KCPP_CHECK(ok, ValueError, "Layer '", name(), "' (Reshape): the total size of the target shape ",
                 shape_str(target_), " does not match the input shape ", shape_str(in[0]));
      if (unknown >= 0) out[unknown + 1] = known_in / known_out;
    }
    return {out};
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    Shape s{in[0].dim(0)};
    s.insert(s.end(), target_.begin(), target_.end());
    return {in[0].reshape(s)};
  }

 private:
  Shape target_;
};

}  // namespace
LayerPtr make_reshape(Json c) { return std::make_shared<Reshape>(std::move(c)); }
bool is_reshape_layer(const Layer& layer) { return dynamic_cast<const Reshape*>(&layer) != nullptr; }
}  // namespace kerascpp::layers
