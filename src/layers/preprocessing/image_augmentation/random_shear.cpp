// keras.layers.RandomShear(x_factor, y_factor, interpolation, fill_mode, fill_value): in training each
// image goes through the projective transform [1, sx, 0, sy, 1, 0, 0, 0] (affine_transform_image: output
// pixel (x, y) reads the input at (x + sx y, sy x + y), about the top-left corner as in Keras), with
// sx ~ U(x_factor), sy ~ U(y_factor) and both negated together with probability 1/2. A factor f is
// (-f, f) (Keras writes that pair to its config), a pair (lower, upper); values in [0, 1] (Keras's
// constructor refuses negative ones, so it cannot reload its own config of a number: kerascpp reads
// pairs in [-1, 1]). Defaults: factors 0, fill_mode reflect, bilinear.
#include <algorithm>

#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/augmentation_helpers.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace {

class RandomShear : public ImageAugmentation {
 public:
  explicit RandomShear(Json given)
      : ImageAugmentation(std::move(given), "RandomShear"),
        x_(shear_factor(config(), "x_factor")),
        y_(shear_factor(config(), "y_factor")),
        sampling_(AffineSampling::from_config(config(), "Layer '" + name() + "' (RandomShear)")) {}

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Layout l = layout(x);
    const Tensor src = x.copy();
    for (int64_t n = 0; n < l.images; ++n) {
      const float sign = aug::uniform(rng, {0.f, 1.f}) > 0.5f ? -1.f : 1.f;
      const float sy = aug::uniform(rng, y_) * sign, sx = aug::uniform(rng, x_) * sign;
      const float t[8] = {1, sx, 0, sy, 1, 0, 0, 0};
      affine_transform_image(x.data<float>() + n * l.image_stride, src.data<float>() + n * l.image_stride, l.h, l.w,
                             l.c, l.row_stride, l.col_stride, l.channel_stride, t, sampling_);
    }
    return x;
  }

 private:
  std::pair<float, float> shear_factor(const Json& c, const char* key) const {
    const Json f = c.value(key, Json(0.0));
    const auto bad = [&](const Json& v) { return !v.is_number() || v.get<float>() > 1.f || v.get<float>() < -1.f; };
    KCPP_CHECK(f.is_number() ? !bad(f) && f.get<float>() >= 0.f : f.is_array() && f.size() == 2 && !bad(f[0]) &&
                                                                     !bad(f[1]),
               ValueError, "Layer '", name(), "' (RandomShear): The `factor` argument should be a number (or a list "
               "of two numbers) in the range [0, 1.0]. Received: ", key, "=", f.dump());
    if (f.is_number()) return {-f.get<float>(), f.get<float>()};
    return {std::min(f[0].get<float>(), f[1].get<float>()), std::max(f[0].get<float>(), f[1].get<float>())};
  }

  std::pair<float, float> x_, y_;
  AffineSampling sampling_;
};

}  // namespace
LayerPtr make_random_shear(Json c) { return std::make_shared<RandomShear>(std::move(c)); }
}  // namespace kerascpp::layers
