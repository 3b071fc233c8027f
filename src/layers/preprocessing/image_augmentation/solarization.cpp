// keras.layers.Solarization(addition_factor, threshold_factor, value_range): in training each image is
// mapped from value_range to [0, 255], gets a ~ U(add_lower, add_upper * 255) added, is clipped to
// [0, 255], and every value r >= t becomes 255 - r, t ~ U(thr_lower, thr_upper * 255); then mapped back
// (Keras 3; its lower bounds are not scaled by 255, so only (0, 0) collapses a range). Defaults 0 and 0:
// every image is inverted. Config keys: addition_factor, threshold_factor (each a number f in [0, 1], read
// (0, f), or a pair of numbers in [0, 1]), value_range (sorted, default (0, 255)).
#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/color_space.h"

namespace kerascpp::layers {
namespace {

class Solarization : public ColorAugmentation {
 public:
  explicit Solarization(Json given) : ColorAugmentation(std::move(given), "Solarization") {
    addition_ = read("addition_factor");
    threshold_ = read("threshold_factor");
    range_ = value_range();
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const color::Range bytes{0.f, 255.f};
    for (const color::Image& im : images(x)) {
      const float a = color::uniform(rng, addition_.first, addition_.second * 255.f);
      const float t = color::uniform(rng, threshold_.first, threshold_.second * 255.f);
      im.each_pixel([&](float* p) {
        for (int64_t k = 0; k < im.c; ++k) {
          float& v = p[k * im.channel];
          const float r = color::clip(color::to_range(v, range_, bytes) + a, bytes);
          v = color::to_range(r < t ? r : 255.f - r, bytes, range_);
        }
      });
    }
    return x;
  }

 private:
  // Solarization._set_factor: a number f in [0, 1] is (0, f); a pair of numbers in [0, 1] is sorted.
  color::Range read(const char* key) const {
    const Json f = config_.value(key, Json(0.0));
    auto in_unit = [](const Json& v) { return v.is_number() && v.get<float>() >= 0.f && v.get<float>() <= 1.f; };
    const bool pair = f.is_array() && f.size() == 2 && in_unit(f[0]) && in_unit(f[1]);
    KCPP_CHECK(pair || in_unit(f) || f.is_null(), ValueError, "Layer '", name(), "' (Solarization): `", key,
               "` must be a number in [0, 1] or a pair of numbers in [0, 1]. Received: ", key, "=", f.dump());
    if (f.is_null()) return {0.f, 0.f};
    if (!pair) return {0.f, f.get<float>()};
    return {std::min(f[0].get<float>(), f[1].get<float>()), std::max(f[0].get<float>(), f[1].get<float>())};
  }

  color::Range addition_, threshold_, range_;
};

}  // namespace
LayerPtr make_solarization(Json c) { return std::make_shared<Solarization>(std::move(c)); }
}  // namespace kerascpp::layers
