// keras.layers.RandomRotation, RandomZoom and RandomTranslation: in training each image goes through
// its own random affine transform (affine_transform_image: fill_mode reflect / wrap / constant /
// nearest, bilinear or nearest interpolation), about the image's centre:
//   rotation by U(lower, upper) turns (factor: fractions of a full turn),
//   zoom by 1 + U(lower, upper) in height, and in width by its own draw (the height's when
//   width_factor is null; a negative factor zooms in),
//   translation by U(lower, upper) times the height and the width.
#include <cmath>

#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace {

class RandomAffine : public ImageAugmentation {
 public:
  RandomAffine(const Json& c, const char* cls) : ImageAugmentation(c, cls), sampling_(AffineSampling::from_config(c, who())) {}

 protected:
  std::string who() const { return "Layer '" + name() + "' (" + class_ + ")"; }
  // The transform of one image of height h and width w.
  virtual void draw(std::mt19937_64& rng, int64_t h, int64_t w, float t[8]) const = 0;
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Layout l = layout(x);
    const Tensor src = x.copy();
    for (int64_t n = 0; n < l.images; ++n) {
      float t[8];
      draw(rng, l.h, l.w, t);
      affine_transform_image(x.data<float>() + n * l.image_stride, src.data<float>() + n * l.image_stride, l.h, l.w, l.c,
                             l.row_stride, l.col_stride, l.channel_stride, t, sampling_);
    }
    return x;
  }
  static float uniform(std::mt19937_64& rng, std::pair<float, float> range) {
    return range.first == range.second ? range.first : std::uniform_real_distribution<float>(range.first, range.second)(rng);
  }

 private:
  AffineSampling sampling_;
};

class RandomRotation : public RandomAffine {
 public:
  explicit RandomRotation(const Json& c) : RandomAffine(c, "RandomRotation"), factor_(factor("factor")) {}

 protected:
  void draw(std::mt19937_64& rng, int64_t h, int64_t w, float t[8]) const override {
    const float angle = uniform(rng, factor_) * 2.f * static_cast<float>(M_PI);
    const float c = std::cos(angle), s = std::sin(angle), wm = static_cast<float>(w - 1), hm = static_cast<float>(h - 1);
    const float m[8] = {c, -s, (wm - (c * wm - s * hm)) / 2, s, c, (hm - (s * wm + c * hm)) / 2, 0, 0};
    std::copy(m, m + 8, t);
  }

 private:
  std::pair<float, float> factor_;
};

class RandomZoom : public RandomAffine {
 public:
  explicit RandomZoom(const Json& c)
      : RandomAffine(c, "RandomZoom"), height_(factor("height_factor")),
        width_(c.value("width_factor", Json()).is_null() ? std::nullopt : std::optional(factor("width_factor"))) {}

 protected:
  void draw(std::mt19937_64& rng, int64_t h, int64_t w, float t[8]) const override {
    const float zy = 1.f + uniform(rng, height_), zx = width_ ? 1.f + uniform(rng, *width_) : zy;
    const float m[8] = {zx, 0, static_cast<float>(w - 1) / 2 * (1 - zx), 0, zy, static_cast<float>(h - 1) / 2 * (1 - zy), 0, 0};
    std::copy(m, m + 8, t);
  }

 private:
  std::pair<float, float> height_;
  std::optional<std::pair<float, float>> width_;
};

class RandomTranslation : public RandomAffine {
 public:
  explicit RandomTranslation(const Json& c)
      : RandomAffine(c, "RandomTranslation"), height_(factor("height_factor")), width_(factor("width_factor")) {}

 protected:
  void draw(std::mt19937_64& rng, int64_t h, int64_t w, float t[8]) const override {
    const float dy = uniform(rng, height_) * static_cast<float>(h), dx = uniform(rng, width_) * static_cast<float>(w);
    const float m[8] = {1, 0, -dx, 0, 1, -dy, 0, 0};
    std::copy(m, m + 8, t);
  }

 private:
  std::pair<float, float> height_, width_;
};

}  // namespace
LayerPtr make_random_rotation(Json c) { return std::make_shared<RandomRotation>(std::move(c)); }
LayerPtr make_random_zoom(Json c) { return std::make_shared<RandomZoom>(std::move(c)); }
LayerPtr make_random_translation(Json c) { return std::make_shared<RandomTranslation>(std::move(c)); }
}  // namespace kerascpp::layers
