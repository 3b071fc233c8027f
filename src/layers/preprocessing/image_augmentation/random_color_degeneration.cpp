// keras.layers.RandomColorDegeneration(factor, value_range): in training each image is blended toward
// its grayscale: x + f * (gray - x), gray = 0.2989 r + 0.5870 g + 0.1140 b (keras.ops.image
// .rgb_to_grayscale, a one-channel image its own gray), f ~ U(lower, upper), clipped to value_range
// (Keras 3). f = 1 is fully gray, f = 0 the image. Config keys: factor (a number f in [-1, 1] is
// (-|f|, |f|); a pair (a, b) needs a <= 1, b >= -1), value_range (sorted, default (0, 255)).
#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/color_space.h"

namespace kerascpp::layers {
namespace {

class RandomColorDegeneration : public ColorAugmentation {
 public:
  explicit RandomColorDegeneration(Json given)
      : ColorAugmentation(std::move(given), "RandomColorDegeneration") {
    factor_ = bounded_factor("factor", -1.f, 1.f);
    range_ = value_range();
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    for (const color::Image& im : images(x, Channels::rgb_or_gray)) {
      const float f = color::uniform(rng, factor_.first, factor_.second);
      im.each_pixel([&](float* p) {
        const float g = im.c == 1 ? p[0] : color::grayscale(p[0], p[im.channel], p[2 * im.channel]);
        for (int64_t k = 0; k < im.c; ++k) {
          float& v = p[k * im.channel];
          v = color::clip(v + f * (g - v), range_);
        }
      });
    }
    return x;
  }

 private:
  color::Range factor_, range_;
};

}  // namespace
LayerPtr make_random_color_degeneration(Json c) {
  return std::make_shared<RandomColorDegeneration>(std::move(c));
}
}  // namespace kerascpp::layers
