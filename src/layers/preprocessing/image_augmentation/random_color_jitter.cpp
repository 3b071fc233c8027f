// keras.layers.RandomColorJitter(value_range, brightness_factor, contrast_factor, saturation_factor,
// hue_factor): in training each image goes through Keras 3's RandomBrightness, RandomContrast,
// RandomSaturation and RandomHue in that order, each with its own draw, skipping those whose factor is
// null; each sub-layer gets the jitter's value_range and reads its factor as that layer does:
// brightness a number f in [-1, 1] is (-|f|, |f|); contrast a number f in [0, 1] is (0, f), so
// U(1, 1 + f) (Keras 3's RandomContrast, not tf_keras's (f, f)); saturation (-|f|, |f|); hue (0, f).
// value_range is sorted for brightness and saturation, kept as given for contrast's clip and for hue.
// Keras builds the sub-layers without data_format, so they read every input as channels_last: a
// channels_first batch (n, c, h, w) is taken as images of c rows, h columns and w channels (contrast
// averages over c and h; saturation and hue need w == 3). kerascpp computes the same.
#include <optional>

#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/color_space.h"

namespace kerascpp::layers {
namespace {

class RandomColorJitter : public ColorAugmentation {
 public:
  explicit RandomColorJitter(const Json& c) : ColorAugmentation(c, "RandomColorJitter") {
    channels_first_ = false;  // the sub-layers' data_format (see above); get_config keeps the given one
    given_ = given_value_range();
    sorted_ = {std::min(given_.first, given_.second), std::max(given_.first, given_.second)};
    brightness_ = read("brightness_factor", -1.f);
    contrast_ = read("contrast_factor", 0.f);
    saturation_ = read("saturation_factor", -1.f);
    hue_ = read("hue_factor", 0.f);
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const bool hsv = saturation_.has_value() || hue_.has_value();
    for (const color::Image& im : images(x, hsv ? Channels::rgb : Channels::any)) {
      if (brightness_) color::brightness(im, color::brightness_delta(rng, *brightness_, sorted_), sorted_);
      if (contrast_) color::contrast(im, color::contrast_factor(rng, *contrast_), given_);
      if (saturation_) color::saturation(im, color::saturation_scale(rng, *saturation_), sorted_);
      if (hue_) color::hue(im, color::hue_delta(rng, *hue_), given_);
    }
    return x;
  }

 private:
  // A sub-layer's factor with Keras's bounds (lo, 1), or none when the key is null or absent.
  std::optional<color::Range> read(const char* key, float lo) const {
    if (config_.value(key, Json()).is_null()) return std::nullopt;
    return bounded_factor(key, lo, 1.f);
  }

  color::Range given_, sorted_;
  std::optional<color::Range> brightness_, contrast_, saturation_, hue_;
};

}  // namespace
LayerPtr make_random_color_jitter(Json c) { return std::make_shared<RandomColorJitter>(std::move(c)); }
}  // namespace kerascpp::layers
