// keras.layers.CutMix(factor) and keras.layers.MixUp(alpha) on a plain image batch (inside a model only
// the images are seen; Keras mixes the labels too when it gets a dict): in training each image n is
// mixed with image perm[n] of the batch, perm a random permutation (possibly n itself), and a weight
// w ~ Beta(a, a) per image (keras_beta):
//   CutMix: a = U(factor) + 1e-6 once for the batch; the box of sides sqrt(1 - w) * w_img and
//     sqrt(1 - w) * h_img, each at U(0, 1) * (side's room) (pixels with column and row in
//     [start, start + side)), takes image perm[n]'s pixels. factor in [0, 1], a number f is (0, f);
//     default 1. One image (rank 3) passes through, as in Keras.
//   MixUp: a = alpha (default 0.2); the image becomes w * image + (1 - w) * image[perm[n]].
#include <algorithm>
#include <cmath>
#include <numeric>

#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/augmentation_helpers.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace {

std::vector<int64_t> permutation(int64_t n, std::mt19937_64& rng) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), rng);
  return p;
}

class CutMix : public ImageAugmentation {
 public:
  explicit CutMix(const Json& c)
      : ImageAugmentation(c, "CutMix"),
        factor_(aug::unit_factor(c, "factor", 1.f, "Layer '" + name() + "' (CutMix)")) {}

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Layout l = layout(x);
    if (x.rank() == 3) return x;
    const float alpha = aug::uniform(rng, factor_) + 1e-6f;
    const std::vector<int64_t> perm = permutation(l.images, rng);
    const Tensor src = x.copy();
    for (int64_t n = 0; n < l.images; ++n) {
      const float ratio = std::sqrt(1.f - aug::keras_beta(rng, alpha));
      aug::Box box;
      std::tie(box.x0, box.x1) = aug::crop_bounds(rng, l.w, ratio);
      std::tie(box.y0, box.y1) = aug::crop_bounds(rng, l.h, ratio);
      const float* other = src.data<float>() + perm[n] * l.image_stride;
      float* img = x.data<float>() + n * l.image_stride;
      for (int64_t y = 0; y < l.h; ++y)
        for (int64_t c = 0; c < l.w; ++c) {
          if (!box.contains(c, y)) continue;
          for (int64_t ch = 0; ch < l.c; ++ch) {
            const int64_t i = y * l.row_stride + c * l.col_stride + ch * l.channel_stride;
            img[i] = other[i];
          }
        }
    }
    return x;
  }

 private:
  std::pair<float, float> factor_;
};

class MixUp : public ImageAugmentation {
 public:
  explicit MixUp(const Json& c) : ImageAugmentation(c, "MixUp"), alpha_(get<float>(c, "alpha", 0.2f)) {}

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Layout l = layout(x);
    KCPP_CHECK(alpha_ >= 0.f, NotImplementedError, "Layer '", name(), "' (MixUp): alpha=", alpha_,
               " is not supported in training (Keras draws its Beta(alpha, alpha) weights from undefined gammas)");
    const std::vector<int64_t> perm = permutation(l.images, rng);
    const Tensor src = x.copy();
    for (int64_t n = 0; n < l.images; ++n) {
      const float w = aug::keras_beta(rng, alpha_);
      const float* other = src.data<float>() + perm[n] * l.image_stride;
      float* img = x.data<float>() + n * l.image_stride;
      for (int64_t i = 0; i < l.image_stride; ++i) img[i] = w * img[i] + (1.f - w) * other[i];
    }
    return x;
  }

 private:
  float alpha_;
};

}  // namespace
LayerPtr make_cut_mix(Json c) { return std::make_shared<CutMix>(std::move(c)); }
LayerPtr make_mix_up(Json c) { return std::make_shared<MixUp>(std::move(c)); }
}  // namespace kerascpp::layers
