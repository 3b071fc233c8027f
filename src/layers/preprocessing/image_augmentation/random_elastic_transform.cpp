// keras.layers.RandomElasticTransform(factor, scale, interpolation, fill_mode, fill_value, value_range):
// in training, with d ~ U(scale) once for the batch, alpha = max(h, w) * 0.1 d and sigma = min(h, w) * 0.05 d,
// each image is transformed with probability U(factor) by keras.ops.image.elastic_transform: a field
// N(0, 1) * sigma per pixel, blurred by gaussian_blur (kernel 6 int(sigma) | 1, sigma sigma), displaces
// every pixel by alpha times it, and the output pixel (x, y) reads the input at (x + alpha dx, y + alpha dy)
// through keras.ops.image.map_coordinates (fill modes on the integer indices, TensorFlow's formulas;
// bilinear or nearest, half to even). Keras draws dx and dy from one seed, so dx == dy: the pixels move
// along the diagonal. Every image is then clipped to value_range; with scale or factor (0, 0) nothing
// happens at all. factor and scale: in [0, 1], a number f is (0, f). fill_mode 'mirror' is refused in
// training (TensorFlow's formula reads one past the image there). Defaults: factor 1, scale 1, bilinear,
// reflect, fill_value 0, value_range (0, 255).
#include <algorithm>
#include <cmath>
#include <vector>

#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/augmentation_helpers.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace {

using Fill = AffineSampling::Fill;

// map_coordinates's index fix-up along an axis of length n; -1 where it reads fill_value.
int64_t fix_index(int64_t i, int64_t n, Fill fill) {
  switch (fill) {
    case Fill::constant: return i >= 0 && i < n ? i : -1;
    case Fill::nearest: return std::clamp<int64_t>(i, 0, n - 1);
    case Fill::wrap: return ((i % n) + n) % n;
    case Fill::reflect: {
      const int64_t m = std::abs(i) % (2 * n);  // TensorFlow's: |i|, so -1 reads index 1
      return m < n ? m : 2 * n - m - 1;
    }
  }
  return -1;
}

// keras.ops.image.map_coordinates(plane, [ys, xs], order 1 or 0, fill_mode, fill_value) at one point.
float map_coordinate(const float* plane, int64_t h, int64_t w, int64_t row, int64_t col, float cy, float cx,
                     const AffineSampling& s) {
  auto read = [&](int64_t y, int64_t x) {
    y = fix_index(y, h, s.fill), x = fix_index(x, w, s.fill);
    return y < 0 || x < 0 ? s.fill_value : plane[y * row + x * col];
  };
  if (s.nearest) return read(static_cast<int64_t>(std::nearbyint(cy)), static_cast<int64_t>(std::nearbyint(cx)));
  const float fy = std::floor(cy), fx = std::floor(cx), uy = cy - fy, ux = cx - fx, ly = 1 - uy, lx = 1 - ux;
  const auto y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  return ly * lx * read(y0, x0) + ly * ux * read(y0, x0 + 1) + uy * lx * read(y0 + 1, x0) +
         uy * ux * read(y0 + 1, x0 + 1);
}

class RandomElasticTransform : public ImageAugmentation {
 public:
  explicit RandomElasticTransform(const Json& c)
      : ImageAugmentation(c, "RandomElasticTransform"), factor_(aug::unit_factor(c, "factor", 1.f, who())),
        scale_(aug::unit_factor(c, "scale", 1.f, who())), range_(value_range()) {
    const std::string interp = get<std::string>(c, "interpolation", "bilinear");
    KCPP_CHECK(interp == "bilinear" || interp == "nearest", NotImplementedError, who(), ": Unknown `interpolation` ",
               interp, ". Expected of one (nearest, bilinear).");
    const std::string fill = get<std::string>(c, "fill_mode", "reflect");
    KCPP_CHECK(fill == "constant" || fill == "nearest" || fill == "wrap" || fill == "mirror" || fill == "reflect",
               NotImplementedError, who(), ": Unknown `fill_mode` ", fill,
               ". Expected of one (constant, nearest, wrap, mirror, reflect).");
    mirror_ = fill == "mirror";
    sampling_.fill = fill == "constant" ? Fill::constant
                     : fill == "nearest" ? Fill::nearest
                     : fill == "wrap"    ? Fill::wrap
                                         : Fill::reflect;
    sampling_.nearest = interp == "nearest";
    sampling_.fill_value = get<float>(c, "fill_value", 0.f);
  }

 protected:
  std::string who() const { return "Layer '" + name() + "' (RandomElasticTransform)"; }
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Layout l = layout(x);
    if (scale_.second == 0.f || factor_.second == 0.f) return x;
    KCPP_CHECK(!mirror_, NotImplementedError, who(), ": fill_mode='mirror' is not supported in training (Keras's "
               "TensorFlow map_coordinates indexes one past the image for it)");
    std::vector<char> apply(static_cast<size_t>(l.images));
    for (auto& a : apply) a = aug::apply_with_probability(rng, factor_);
    const float d = aug::uniform(rng, scale_);
    const float alpha = static_cast<float>(std::max(l.h, l.w)) * (0.1f * d);
    const float sigma = static_cast<float>(std::min(l.h, l.w)) * (0.05f * d);
    const int64_t k = 6 * static_cast<int64_t>(sigma) | 1;
    const Tensor src = x.copy();
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<float> noise(static_cast<size_t>(l.h * l.w)), shift(noise.size(), 0.f);
    for (int64_t n = 0; n < l.images; ++n) {
      if (!apply[n]) continue;
      if (sigma > 0.f) {
        for (float& v : noise) v = normal(rng) * sigma;
        aug::gaussian_blur_plane(noise.data(), shift.data(), l.h, l.w, l.w, 1, k, k, sigma, sigma);
      }
      for (int64_t ch = 0; ch < l.c; ++ch) {
        const float* in = src.data<float>() + n * l.image_stride + ch * l.channel_stride;
        float* out = x.data<float>() + n * l.image_stride + ch * l.channel_stride;
        for (int64_t y = 0; y < l.h; ++y)
          for (int64_t c = 0; c < l.w; ++c) {
            const float delta = alpha * shift[y * l.w + c];  // dx == dy
            out[y * l.row_stride + c * l.col_stride] = map_coordinate(
                in, l.h, l.w, l.row_stride, l.col_stride, static_cast<float>(y) + delta, static_cast<float>(c) + delta,
                sampling_);
          }
      }
    }
    float* v = x.data<float>();
    for (int64_t i = 0; i < x.size(); ++i) v[i] = std::clamp(v[i], range_.first, range_.second);
    return x;
  }

 private:
  std::pair<float, float> factor_, scale_, range_;
  AffineSampling sampling_;
  bool mirror_ = false;
};

}  // namespace
LayerPtr make_random_elastic_transform(Json c) {
  return std::make_shared<RandomElasticTransform>(std::move(c));
}
}  // namespace kerascpp::layers
