// keras.layers.RandomHue(factor, value_range): in training each image is mapped from value_range to
// [0, 1], turned to HSV (tf.image.rgb_to_hsv), its hue shifted by delta = +-f / 2, f ~ U(lower, upper),
// the sign - with probability 1/2, wrapped once into [0, 1], turned back to RGB, clipped to [0, 1] and
// mapped back to value_range (Keras 3). Config keys: factor (a number f in [0, 1] is (0, f); a pair
// (a, b) needs a <= 1, b >= 0), value_range (kept as given, default (0, 255)). factor=(1, 1) shifts every
// image by half a turn, whatever the sign.
#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/color_space.h"

namespace kerascpp::layers {
namespace {

class RandomHue : public ColorAugmentation {
 public:
  explicit RandomHue(const Json& c) : ColorAugmentation(c, "RandomHue") {
    factor_ = bounded_factor("factor", 0.f, 1.f);
    range_ = given_value_range();
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    for (const color::Image& im : images(x, Channels::rgb)) color::hue(im, color::hue_delta(rng, factor_), range_);
    return x;
  }

 private:
  color::Range factor_, range_;
};

}  // namespace
LayerPtr make_random_hue(Json c) { return std::make_shared<RandomHue>(std::move(c)); }
}  // namespace kerascpp::layers
