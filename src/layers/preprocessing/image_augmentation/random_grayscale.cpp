// keras.layers.RandomGrayscale(factor): in training each image becomes gray with probability factor
// (u < factor, u ~ U(0, 1)): every channel set to keras.ops.image.rgb_to_grayscale's
// 0.2989 r + 0.5870 g + 0.1140 b (one-channel images stay as they are). Config key: factor, a number in
// [0, 1] (default 0.5).
#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/color_space.h"

namespace kerascpp::layers {
namespace {

class RandomGrayscale : public ColorAugmentation {
 public:
  explicit RandomGrayscale(Json given) : ColorAugmentation(std::move(given), "RandomGrayscale") {
    const Json f = config().value("factor", Json(0.5));
    KCPP_CHECK(f.is_number() && f.get<float>() >= 0.f && f.get<float>() <= 1.f, ValueError, "Layer '", name(),
               "' (RandomGrayscale): `factor` must be a number between 0 and 1. Received: factor=", f.dump());
    factor_ = f.get<float>();
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    for (const color::Image& im : images(x, Channels::rgb_or_gray)) {
      if (!(color::uniform(rng, 0.f, 1.f) < factor_) || im.c == 1) continue;
      im.each_pixel([&](float* p) {
        const float g = color::grayscale(p[0], p[im.channel], p[2 * im.channel]);
        for (int64_t k = 0; k < 3; ++k) p[k * im.channel] = g;
      });
    }
    return x;
  }

 private:
  float factor_;
};

}  // namespace
LayerPtr make_random_grayscale(Json c) { return std::make_shared<RandomGrayscale>(std::move(c)); }
}  // namespace kerascpp::layers
