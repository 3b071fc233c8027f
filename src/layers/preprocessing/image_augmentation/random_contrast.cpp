// keras.layers.RandomContrast(factor, value_range): in training each image becomes
// (x - mean) * f + mean, mean per channel over the image, f ~ U(1 - lower, 1 + upper), clipped to
// value_range (Keras 3). The config keeps Keras's (lower, upper); a number f is (f, f) as tf_keras reads it.
// (lower = -upper collapses the range to one value.)
#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace {

class RandomContrast : public ImageAugmentation {
 public:
  explicit RandomContrast(const Json& c) : ImageAugmentation(c, "RandomContrast") {
    const Json f = c.value("factor", Json());
    if (f.is_number()) {
      lower_ = upper_ = f.get<float>();
    } else {
      std::tie(lower_, upper_) = factor("factor");
    }
    KCPP_CHECK(lower_ <= 1.f && upper_ >= 0.f, ValueError, "Layer '", name(),
               "' (RandomContrast): `factor` must be in [0, 1]. Received: factor=", f.dump());
    range_ = value_range();
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Layout l = layout(x);
    const float a = std::min(1.f - lower_, 1.f + upper_), b = std::max(1.f - lower_, 1.f + upper_);
    std::uniform_real_distribution<float> u(a, b);
    for (int64_t n = 0; n < l.images; ++n) {
      const float f = a == b ? a : u(rng);
      float* img = x.data<float>() + n * l.image_stride;
      for (int64_t ch = 0; ch < l.c; ++ch) {
        double sum = 0;
        for (int64_t y = 0; y < l.h; ++y)
          for (int64_t c = 0; c < l.w; ++c) sum += img[y * l.row_stride + c * l.col_stride + ch * l.channel_stride];
        const float mean = static_cast<float>(sum / static_cast<double>(l.h * l.w));
        for (int64_t y = 0; y < l.h; ++y)
          for (int64_t c = 0; c < l.w; ++c) {
            float& v = img[y * l.row_stride + c * l.col_stride + ch * l.channel_stride];
            v = std::clamp((v - mean) * f + mean, range_.first, range_.second);
          }
      }
    }
    return x;
  }

 private:
  float lower_ = 0, upper_ = 0;
  std::pair<float, float> range_;
};

}  // namespace
LayerPtr make_random_contrast(Json c) { return std::make_shared<RandomContrast>(std::move(c)); }
}  // namespace kerascpp::layers
