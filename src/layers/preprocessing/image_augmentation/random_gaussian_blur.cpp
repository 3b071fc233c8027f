// keras.layers.RandomGaussianBlur(factor, kernel_size, sigma, value_range): in training each image is
// blurred with probability U(factor) by keras.ops.image.gaussian_blur (gaussian_blur_plane: zero padding
// SAME) with kernel_size (k0, k1) and one sigma pair for the batch, (U(sigma) + 1e-6, U(sigma) + 1e-6);
// then every image is clipped to value_range. factor and sigma: in [0, 1], a number f is (0, f);
// kernel_size: an odd number k, (k, k), or a pair of odd numbers. Defaults: factor 1, kernel_size 3,
// sigma 1, value_range (0, 255).
#include <algorithm>
#include <cmath>
#include <vector>

#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/augmentation_helpers.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace {

class RandomGaussianBlur : public ImageAugmentation {
 public:
  explicit RandomGaussianBlur(const Json& c)
      : ImageAugmentation(c, "RandomGaussianBlur"), factor_(aug::unit_factor(c, "factor", 1.f, who())),
        sigma_(aug::unit_factor(c, "sigma", 1.f, who())), range_(value_range()) {
    const Json k = c.value("kernel_size", Json(3));
    KCPP_CHECK(k.is_number() || (k.is_array() && k.size() == 2), ValueError, who(), ": The `kernel_size` argument "
               "should be a number (or a list of two numbers) Received: kernel_size=", k.dump());
    const auto odd = [](const Json& v) {
      return v.is_number() && std::fmod(v.get<double>(), 2.0) != 0.0 && v.get<double>() == std::floor(v.get<double>());
    };
    KCPP_CHECK(k.is_number() ? odd(k) : odd(k[0]) && odd(k[1]), ValueError, who(),
               ": kernel_size must be an odd number. Received: kernel_size=", k.dump());
    k0_ = k.is_number() ? k.get<int64_t>() : k[0].get<int64_t>();
    k1_ = k.is_number() ? k0_ : k[1].get<int64_t>();
    KCPP_CHECK(k0_ > 0 && k1_ > 0, NotImplementedError, who(), ": a negative kernel_size (", k.dump(),
               ") is not supported");
  }

 protected:
  std::string who() const { return "Layer '" + name() + "' (RandomGaussianBlur)"; }
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    const Layout l = layout(x);
    std::vector<char> apply(static_cast<size_t>(l.images));
    for (auto& a : apply) a = aug::apply_with_probability(rng, factor_);
    const float s0 = aug::uniform(rng, sigma_) + 1e-6f, s1 = aug::uniform(rng, sigma_) + 1e-6f;
    const Tensor src = x.copy();
    for (int64_t n = 0; n < l.images; ++n)
      for (int64_t ch = 0; ch < l.c; ++ch) {
        const int64_t off = n * l.image_stride + ch * l.channel_stride;
        if (apply[n])
          aug::gaussian_blur_plane(src.data<float>() + off, x.data<float>() + off, l.h, l.w, l.row_stride,
                                   l.col_stride, k0_, k1_, s0, s1);
      }
    float* v = x.data<float>();
    for (int64_t i = 0; i < x.size(); ++i) v[i] = std::clamp(v[i], range_.first, range_.second);
    return x;
  }

 private:
  std::pair<float, float> factor_, sigma_, range_;
  int64_t k0_ = 3, k1_ = 3;
};

}  // namespace
LayerPtr make_random_gaussian_blur(Json c) { return std::make_shared<RandomGaussianBlur>(std::move(c)); }
}  // namespace kerascpp::layers
