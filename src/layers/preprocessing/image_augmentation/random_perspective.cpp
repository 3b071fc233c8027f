// keras.layers.RandomPerspective(factor, scale, interpolation, fill_value): in training each image is
// transformed with probability U(factor) (factor in [0, 1]; a number f is (0, f)): each corner
// (0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1) moves to corner * (1 + d), d ~ U(-scale / 2, scale / 2)
// per coordinate (so (0, 0) stays, as in Keras), and the image goes through the projective transform
// that maps the moved corners back to the corners (keras.ops.image.perspective_transform: fill_mode
// constant with fill_value, bilinear or nearest). scale: a number in [0, 1].
#include <algorithm>
#include <cmath>

#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/augmentation_helpers.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace {

// keras.ops.image.compute_homography_matrix: the transform t (affine_transform_image's) that reads output
// pixel end[i] from input pixel start[i], solved in double. False when the corners are degenerate.
bool homography(const float start[4][2], const float end[4][2], float t[8]) {
  double a[8][9];
  for (int i = 0; i < 4; ++i) {
    const double sx = start[i][0], sy = start[i][1], ex = end[i][0], ey = end[i][1];
    const double r0[9] = {ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey, sx};
    const double r1[9] = {0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey, sy};
    std::copy(r0, r0 + 9, a[2 * i]);
    std::copy(r1, r1 + 9, a[2 * i + 1]);
  }
  for (int k = 0; k < 8; ++k) {  // Gaussian elimination, partial pivoting
    int p = k;
    for (int r = k + 1; r < 8; ++r)
      if (std::fabs(a[r][k]) > std::fabs(a[p][k])) p = r;
    if (std::fabs(a[p][k]) < 1e-12) return false;
    std::swap(a[k], a[p]);
    for (int r = 0; r < 8; ++r) {
      if (r == k) continue;
      const double m = a[r][k] / a[k][k];
      for (int j = k; j < 9; ++j) a[r][j] -= m * a[k][j];
    }
  }
  for (int k = 0; k < 8; ++k) t[k] = static_cast<float>(a[k][8] / a[k][k]);
  return true;
}

class RandomPerspective : public ImageAugmentation {
 public:
  explicit RandomPerspective(Json given)
      : ImageAugmentation(std::move(given), "RandomPerspective"),
        factor_(aug::unit_factor(config(), "factor", 1.f, "Layer '" + name() + "' (RandomPerspective)")) {
    const Json s = config().value("scale", Json(1.0));
    KCPP_CHECK(s.is_number() && s.get<float>() >= 0.f && s.get<float>() <= 1.f, ValueError, "Layer '", name(),
               "' (RandomPerspective): The `scale` argument should be a number in the range [0,1]. Received: scale=",
               s.dump());
    scale_ = s.get<float>();
    const std::string interp = get<std::string>(config(), "interpolation", "bilinear");
    KCPP_CHECK(interp == "bilinear" || interp == "nearest", NotImplementedError, "Layer '", name(),
               "' (RandomPerspective): Unknown `interpolation` ", interp, ". Expected of one (nearest, bilinear).");
    sampling_.fill = AffineSampling::Fill::constant;
    sampling_.nearest = interp == "nearest";
    sampling_.fill_value = get<float>(config(), "fill_value", 0.f);
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Layout l = layout(x);
    const Tensor src = x.copy();
    const float wm = static_cast<float>(l.w - 1), hm = static_cast<float>(l.h - 1);
    const float start[4][2] = {{0, 0}, {wm, 0}, {0, hm}, {wm, hm}};
    for (int64_t n = 0; n < l.images; ++n) {
      const bool apply = aug::apply_with_probability(rng, factor_);
      float end[4][2], t[8];
      for (int i = 0; i < 4; ++i)
        for (int k = 0; k < 2; ++k)
          end[i][k] = start[i][k] + start[i][k] * aug::uniform(rng, {-scale_ / 2, scale_ / 2});
      if (!apply || !homography(start, end, t)) continue;
      affine_transform_image(x.data<float>() + n * l.image_stride, src.data<float>() + n * l.image_stride, l.h, l.w,
                             l.c, l.row_stride, l.col_stride, l.channel_stride, t, sampling_);
    }
    return x;
  }

 private:
  std::pair<float, float> factor_;
  float scale_ = 1.f;
  AffineSampling sampling_;
};

}  // namespace
LayerPtr make_random_perspective(Json c) { return std::make_shared<RandomPerspective>(std::move(c)); }
}  // namespace kerascpp::layers
