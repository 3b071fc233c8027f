// keras.layers.RandomErasing(factor, scale, fill_value, value_range): in training each image is erased
// with probability U(factor): the box of width sqrt(U(scale)) * w at U(0, 1) * (w - width) and height
// sqrt(U(scale)) * h at U(0, 1) * (h - height) (pixels whose column and row fall in [start, start + size))
// takes fill_value in every channel: a number, three numbers (one per channel), or by default
// N(0, 1) * value_range[1] drawn per element; clipped to value_range. factor and scale: in [0, 1], a
// number f is (0, f). Defaults: factor 1, scale (0.02, 0.33), value_range (0, 255).
#include <algorithm>
#include <cmath>

#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/augmentation_helpers.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace {

class RandomErasing : public ImageAugmentation {
 public:
  explicit RandomErasing(Json given)
      : ImageAugmentation(std::move(given), "RandomErasing"),
        factor_(aug::unit_factor(config(), "factor", 1.f, who())),
        scale_(config().contains("scale") && !config()["scale"].is_null()
                   ? aug::unit_factor(config(), "scale", 0.f, who())
                   : std::pair(0.02f, 0.33f)),
        range_(value_range()),
        fill_(config().value("fill_value", Json())) {}

 protected:
  std::string who() const { return "Layer '" + name() + "' (RandomErasing)"; }
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Layout l = layout(x);
    // Keras's fill: full_like(images, fill_value) for a list, which broadcasts it over the last axis.
    const bool three = fill_.is_array() && fill_.size() == 3 &&
                       std::all_of(fill_.begin(), fill_.end(), [](const Json& v) { return v.is_number(); });
    KCPP_CHECK(fill_.is_null() || fill_.is_number() || three, ValueError, who(),
               ": The `fill_value` argument should be a number (or a list of three numbers). Received: fill_value=",
               fill_.dump());
    KCPP_CHECK(!fill_.is_array() || !channels_first_, NotImplementedError, who(), ": a list fill_value with "
               "data_format='channels_first' (Keras broadcasts it over the width) is not supported");
    KCPP_CHECK(!fill_.is_array() || l.c == 3, ValueError, who(), ": fill_value=", fill_.dump(), " has 3 values "
               "for images of ", l.c, " channels");
    std::normal_distribution<float> normal(0.f, 1.f);
    for (int64_t n = 0; n < l.images; ++n) {
      const float rx = std::sqrt(aug::uniform(rng, scale_)), ry = std::sqrt(aug::uniform(rng, scale_));
      aug::Box box;
      std::tie(box.x0, box.x1) = aug::crop_bounds(rng, l.w, rx);
      std::tie(box.y0, box.y1) = aug::crop_bounds(rng, l.h, ry);
      if (!aug::apply_with_probability(rng, factor_)) continue;
      float* img = x.data<float>() + n * l.image_stride;
      for (int64_t y = 0; y < l.h; ++y)
        for (int64_t c = 0; c < l.w; ++c) {
          if (!box.contains(c, y)) continue;
          for (int64_t ch = 0; ch < l.c; ++ch) {
            const float v = fill_.is_null()     ? normal(rng) * range_.second
                            : fill_.is_number() ? fill_.get<float>()
                                                : fill_[ch].get<float>();
            const int64_t i = y * l.row_stride + c * l.col_stride + ch * l.channel_stride;
            img[i] = std::clamp(v, range_.first, range_.second);
          }
        }
    }
    return x;
  }

 private:
  std::pair<float, float> factor_, scale_, range_;
  Json fill_;
};

}  // namespace
LayerPtr make_random_erasing(Json c) { return std::make_shared<RandomErasing>(std::move(c)); }
}  // namespace kerascpp::layers
