// keras.layers.RandomSharpness(factor, value_range): in training each image is blended with its
// smoothing by the 3x3 kernel [[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13 per channel (zero padding, 'same'):
// x + (1 - 2 f) * (smoothed - x), f ~ U(lower, upper), clipped to value_range (Keras 3). f = 0.5 keeps the
// image, f < 0.5 blurs, f > 0.5 sharpens. Config keys: factor (a number f in [0, 1] is (0, f); a pair
// (a, b) needs a <= 1, b >= 0), value_range (sorted, default (0, 255)).
#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/color_space.h"

namespace kerascpp::layers {
namespace {

class RandomSharpness : public ColorAugmentation {
 public:
  explicit RandomSharpness(const Json& c) : ColorAugmentation(c, "RandomSharpness") {
    factor_ = bounded_factor("factor", 0.f, 1.f);
    range_ = value_range();
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Tensor src = x.copy();
    const float edge = static_cast<float>(1.0 / 13.0), centre = static_cast<float>(5.0 / 13.0);
    for (const color::Image& im : images(x)) {
      const float blend = 1.f - color::uniform(rng, factor_.first, factor_.second) * 2.f;
      const color::Image in{src.data<float>() + (im.data - x.data<float>()), im.h, im.w, im.c, im.row, im.col,
                            im.channel};
      for (int64_t y = 0; y < im.h; ++y)
        for (int64_t c = 0; c < im.w; ++c)
          for (int64_t k = 0; k < im.c; ++k) {
            float smoothed = 0.f;
            for (int64_t dy = -1; dy <= 1; ++dy)
              for (int64_t dx = -1; dx <= 1; ++dx) {
                if (y + dy < 0 || y + dy >= im.h || c + dx < 0 || c + dx >= im.w) continue;
                smoothed += in.at(y + dy, c + dx, k) * (dy == 0 && dx == 0 ? centre : edge);
              }
            const float v = in.at(y, c, k);
            im.at(y, c, k) = color::clip(v + blend * (smoothed - v), range_);
          }
    }
    return x;
  }

 private:
  color::Range factor_, range_;
};

}  // namespace
LayerPtr make_random_sharpness(Json c) { return std::make_shared<RandomSharpness>(std::move(c)); }
}  // namespace kerascpp::layers
