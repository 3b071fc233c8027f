// keras.layers.RandomPosterization(factor, value_range): in training each image keeps `bits` high bits of
// its values: mapped from value_range to [0, 255], cast to uint8 (truncated, wrapping as tf.cast does),
// v >> s << s with s = uint8(8 - bits) (TensorFlow clamps shifts past 7 to 7), mapped back (Keras 3).
// bits = lower when lower == upper, else a random integer in [lower, upper) (keras.random.randint:
// upper excluded). Config keys: factor (a number f in [1, 8] is (1, f); a pair (a, b) needs a <= 8,
// b >= 1; integers, as Keras's uint8 draw needs), value_range (sorted, default (0, 255)).
#include <cmath>

#include "layers/layer_list.h"
#include "layers/preprocessing/category_encoding.h"
#include "layers/preprocessing/image_augmentation/color_space.h"

namespace kerascpp::layers {
namespace {

class RandomPosterization : public ColorAugmentation {
 public:
  explicit RandomPosterization(Json given) : ColorAugmentation(std::move(given), "RandomPosterization") {
    const color::Range f = bounded_factor("factor", 1.f, 8.f);
    KCPP_CHECK(f.first == std::floor(f.first) && f.second == std::floor(f.second), ValueError, "Layer '",
               name(),
               "' (RandomPosterization): `factor` must hold integers (bits to keep). Received: factor=",
               config().value("factor", Json()).dump());
    lower_ = static_cast<int>(f.first), upper_ = static_cast<int>(f.second);
    range_ = value_range();
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const color::Range bytes{0.f, 255.f};
    for (const color::Image& im : images(x)) {
      const int bits = lower_ == upper_ ? lower_ : std::uniform_int_distribution<int>(lower_, upper_ - 1)(rng);
      const int shift = std::min(static_cast<uint8_t>(8 - static_cast<uint8_t>(bits)), uint8_t{7});
      im.each_pixel([&](float* p) {
        for (int64_t k = 0; k < im.c; ++k) {
          float& v = p[k * im.channel];
          const auto byte = static_cast<uint8_t>(tf_cast_int64(color::to_range(v, range_, bytes)) & 0xFF);
          v = color::to_range(static_cast<float>((byte >> shift) << shift & 0xFF), bytes, range_);
        }
      });
    }
    return x;
  }

 private:
  int lower_, upper_;
  color::Range range_;
};

}  // namespace
LayerPtr make_random_posterization(Json c) { return std::make_shared<RandomPosterization>(std::move(c)); }
}  // namespace kerascpp::layers
