// keras.layers.AutoContrast(value_range=(0, 255)) (image_preprocessing/auto_contrast.py), at inference
// and in training alike: each image's values stretched to the full value_range, x -> (x - low) * 255 /
// (high - low) on the (0, 255) scale, low / high the min / max over axes 1 and 2 of the batched images
// (height and width per channel for channels_last; Keras reduces the same axes for channels_first,
// which are channels and height there). A constant slice (no contrast) keeps its values.
#include <cmath>
#include <limits>

#include "layers/config_utils.h"
#include "layers/layer_list.h"

namespace kerascpp::layers {
namespace {

class AutoContrast : public Layer {
 public:
  explicit AutoContrast(Json given) : Layer(std::move(given)) {
    const Json r = config().value("value_range", Json::array({0, 255}));
    KCPP_CHECK(r.is_array() && r.size() == 2 && r[0].is_number() && r[1].is_number(), ValueError, "Layer '", name(),
               "' (AutoContrast): The `value_range` argument should be a list of two numbers. Received: value_range=",
               r.dump());
    lo_ = std::min(r[0].get<float>(), r[1].get<float>());
    hi_ = std::max(r[0].get<float>(), r[1].get<float>());
  }
  std::string class_name() const override { return "AutoContrast"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    KCPP_CHECK(in[0].size() == 3 || in[0].size() == 4, ValueError, "Layer '", name(),
               "' (AutoContrast) expects images of rank 3 or 4. Received: inputs.shape=", shape_str(in[0]));
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    compute_output_shape({in[0].shape()});
    const Tensor x = in[0].dtype() == DType::float32 ? in[0] : in[0].astype(DType::float32);
    Tensor y = Tensor::empty(x.shape());
    const int off = x.rank() - 3;  // an unbatched image is a batch of one
    const int64_t n = off ? x.dim(0) : 1, a = x.dim(off), b = x.dim(off + 1), last = x.dim(off + 2);
    const bool rescale = lo_ != 0.f || hi_ != 255.f;
    auto to255 = [&](float v) { return rescale ? (v - lo_) / (hi_ - lo_) * 255.f : v; };
    for (int64_t i = 0; i < n; ++i) {
      const float* src = x.data<float>() + i * a * b * last;
      float* dst = y.data<float>() + i * a * b * last;
      for (int64_t k = 0; k < last; ++k) {  // reduce over the two middle axes for each index of the last
        float low = std::numeric_limits<float>::infinity(), high = -low;
        for (int64_t j = 0; j < a * b; ++j) {
          low = std::min(low, to255(src[j * last + k]));
          high = std::max(high, to255(src[j * last + k]));
        }
        const float scale = 255.f / (high - low), offset = -low * scale;
        for (int64_t j = 0; j < a * b; ++j) {
          const float v = src[j * last + k];
          float r = std::clamp(to255(v) * scale + offset, 0.f, 255.f);
          if (rescale) r = r / 255.f * (hi_ - lo_) + lo_;
          dst[j * last + k] = std::isnan(r) ? v : r;  // 0 * inf: no contrast to stretch
        }
      }
    }
    return {y};
  }

 private:
  float lo_ = 0.f, hi_ = 255.f;
};

}  // namespace
LayerPtr make_auto_contrast(Json c) { return std::make_shared<AutoContrast>(std::move(c)); }
}  // namespace kerascpp::layers
