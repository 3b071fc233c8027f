// keras.layers.RandomBrightness(factor, value_range): in training each image gets one delta
// ~ U(lower, upper) * (value_range[1] - value_range[0]) added, then is clipped to value_range.
#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace {

class RandomBrightness : public ImageAugmentation {
 public:
  explicit RandomBrightness(const Json& c) : ImageAugmentation(c, "RandomBrightness") {
    std::tie(lower_, upper_) = factor("factor");
    KCPP_CHECK(lower_ >= -1.f && upper_ <= 1.f, ValueError, "Layer '", name(),
               "' (RandomBrightness): `factor` must be in [-1, 1]. Received: factor=", c.value("factor", Json()).dump());
    range_ = value_range();
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Layout l = layout(x);
    std::uniform_real_distribution<float> u(lower_, upper_);
    for (int64_t n = 0; n < l.images; ++n) {
      const float delta = u(rng) * (range_.second - range_.first);
      float* img = x.data<float>() + n * l.image_stride;
      for (int64_t i = 0; i < l.image_stride; ++i) img[i] = std::clamp(img[i] + delta, range_.first, range_.second);
    }
    return x;
  }

 private:
  float lower_ = 0, upper_ = 0;
  std::pair<float, float> range_;
};

}  // namespace
LayerPtr make_random_brightness(Json c) { return std::make_shared<RandomBrightness>(std::move(c)); }
}  // namespace kerascpp::layers
