// keras.layers.RandomInvert(factor, value_range): in training each image is inverted, x -> value_range[1] - x
// (value_range as given; no clip), when u < p, u ~ U(0, 1), p ~ U(lower, upper) (Keras 3): factor=(q, q)
// inverts with probability q, factor=(1, 1) always. Config keys: factor (a number f in [0, 1] is (0, f),
// default 1; a pair (a, b) needs a <= 1, b >= 0), value_range (default (0, 255)).
#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/color_space.h"

namespace kerascpp::layers {
namespace {

class RandomInvert : public ColorAugmentation {
 public:
  explicit RandomInvert(Json given) : ColorAugmentation(std::move(given), "RandomInvert") {
    factor_ = bounded_factor("factor", 0.f, 1.f, Json(1.0));
    top_ = given_value_range().second;
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    for (const color::Image& im : images(x)) {
      const float p = color::uniform(rng, factor_.first, factor_.second);
      if (!(color::uniform(rng, 0.f, 1.f) < p)) continue;
      im.each_pixel([&](float* px) {
        for (int64_t k = 0; k < im.c; ++k) px[k * im.channel] = top_ - px[k * im.channel];
      });
    }
    return x;
  }

 private:
  color::Range factor_;
  float top_;
};

}  // namespace
LayerPtr make_random_invert(Json c) { return std::make_shared<RandomInvert>(std::move(c)); }
}  // namespace kerascpp::layers
