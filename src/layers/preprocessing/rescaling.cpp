// keras.layers.Rescaling: x * scale + offset; scale and offset are numbers or per-channel lists.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

Tensor number_or_list(const Json& config, const char* key, float fallback) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return Tensor::from_vector({}, {fallback});
  if (it->is_number()) return Tensor::from_vector({}, {it->get<float>()});
  auto v = get<std::vector<float>>(config, key, {});
  return Tensor::from_vector({static_cast<int64_t>(v.size())}, v);
}

class Rescaling : public Layer {
 public:
  explicit Rescaling(Json given)
      : Layer(std::move(given)),
        scale_(number_or_list(config(), "scale", 1.f)),
        offset_(number_or_list(config(), "offset", 0.f)) {}
  std::string class_name() const override { return "Rescaling"; }
  bool supports_masking() const override { return true; }  // as Keras 3's
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    if (scale_.rank() == 0 && offset_.rank() == 0)
      return {ops::scale_shift(in[0], scale_.data<float>()[0], offset_.data<float>()[0])};
    return {ops::binary(ops::BinaryOp::add, ops::binary(ops::BinaryOp::multiply, in[0], scale_), offset_)};
  }

 private:
  Tensor scale_, offset_;
};

}  // namespace
LayerPtr make_rescaling(Json c) { return std::make_shared<Rescaling>(std::move(c)); }
}  // namespace kerascpp::layers
