// keras.layers.RandomSaturation(factor, value_range): in training each image is turned to HSV
// (tf.image.rgb_to_hsv on its values as they are), its saturation scaled by k = f / (1 - f + 1e-7),
// f ~ U(lower, upper), clipped to value_range (as Keras 3 clips it: not to [0, 1], so f near 1 pushes
// S past 1 and the colors out of range), and turned back to RGB; no clip after. f = 0.5 keeps the image,
// f <= 0 makes it gray. Config keys: factor (a number f in [-1, 1] is (-|f|, |f|); a pair (a, b) needs
// a <= 1, b >= -1), value_range (sorted, default (0, 255)).
#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/color_space.h"

namespace kerascpp::layers {
namespace {

class RandomSaturation : public ColorAugmentation {
 public:
  explicit RandomSaturation(const Json& c) : ColorAugmentation(c, "RandomSaturation") {
    factor_ = bounded_factor("factor", -1.f, 1.f);
    range_ = value_range();
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    for (const color::Image& im : images(x, Channels::rgb))
      color::saturation(im, color::saturation_scale(rng, factor_), range_);
    return x;
  }

 private:
  color::Range factor_, range_;
};

}  // namespace
LayerPtr make_random_saturation(Json c) { return std::make_shared<RandomSaturation>(std::move(c)); }
}  // namespace kerascpp::layers
