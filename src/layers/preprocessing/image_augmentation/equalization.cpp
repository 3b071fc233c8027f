// keras.layers.Equalization(value_range, bins): in training each channel is histogram-equalised over
// the whole batch (Keras takes images[..., i], every image of the batch together): values scaled from
// value_range to [0, 255], counted in `bins` bins (int(v * (bins - 1) / 255), clipped), the lookup table
// round((cdf - cdf_min) * 255 / (cdf[-1] - cdf_min)) (cdf_min the first non-zero count; half to even,
// in double as TensorFlow divides int32), each value mapped through entry int(clip(v / 255 * (bins - 1)))
// and scaled back to value_range; a channel with values in one bin only keeps them. No randomness; at
// inference the input passes through. Defaults: value_range (0, 255), bins 256.
#include <algorithm>
#include <cmath>
#include <vector>

#include "layers/layer_list.h"
#include "layers/preprocessing/category_encoding.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace {

// One channel of a batch: `images` planes of h x w values at these strides.
struct Channel {
  float* data;
  int64_t images, h, w, image_stride, row, col;
  template <typename F>
  void each(F f) const {
    for (int64_t n = 0; n < images; ++n)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) f(data[n * image_stride + y * row + x * col]);
  }
};

// The channel equalised in place; lo, hi: the sorted value_range.
void equalize_channel(const Channel& ch, double lo, double hi, int64_t bins) {
  // Keras's _scale_values, v * scale + offset: in float32 to [0, 255], back in float64 (the lookup table's
  // dtype, which the result takes).
  const auto to255 = std::pair(static_cast<float>(255.0 / (hi - lo)), static_cast<float>(-lo * (255.0 / (hi - lo))));
  ch.each([&](float& v) { v = v * to255.first + to255.second; });
  std::vector<int64_t> hist(static_cast<size_t>(bins), 0);
  const float nb = static_cast<float>(bins - 1);
  const auto bin = [&](float scaled) {  // int32 cast truncates, then clip
    return std::clamp<int64_t>(tf_cast_int64(scaled), 0, bins - 1);
  };
  ch.each([&](float& v) { ++hist[bin(v * nb / 255.f)]; });
  if (std::count_if(hist.begin(), hist.end(), [](int64_t k) { return k != 0; }) > 1) {
    std::vector<double> lut(hist.size());
    int64_t cdf = 0, cdf_min = 0;
    for (int64_t k : hist)
      if (k != 0) {
        cdf_min = k;
        break;
      }
    int64_t total = 0;
    for (int64_t k : hist) total += k;
    const int64_t den = total - cdf_min == 0 ? 1 : total - cdf_min;
    for (size_t i = 0; i < hist.size(); ++i) {
      cdf += hist[i];
      lut[i] = std::clamp(std::nearbyint(static_cast<double>((cdf - cdf_min) * 255) / static_cast<double>(den)), 0.0,
                          255.0);
    }
    ch.each([&](float& v) { v = static_cast<float>(lut[static_cast<size_t>(bin(v / 255.f * nb))]); });
  }
  ch.each([&](float& v) { v = static_cast<float>(static_cast<double>(v) * ((hi - lo) / 255.0) + lo); });
}

class Equalization : public ImageAugmentation {
 public:
  explicit Equalization(Json given)
      : ImageAugmentation(std::move(given), "Equalization"), bins_(get<int64_t>(config(), "bins", 256)) {
    const Json r = config().value("value_range", Json::array({0, 255}));
    KCPP_CHECK(r.is_array() && r.size() == 2 && r[0].is_number() && r[1].is_number(), ValueError, "Layer '", name(),
               "' (Equalization): The `value_range` argument should be a list of two numbers. Received: value_range=",
               r.dump());
    lo_ = std::min(r[0].get<double>(), r[1].get<double>());
    hi_ = std::max(r[0].get<double>(), r[1].get<double>());
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64&) const override {
    KCPP_CHECK(bins_ >= 1 && hi_ > lo_, NotImplementedError, "Layer '", name(), "' (Equalization): bins=", bins_,
               " with value_range=[", lo_, ", ", hi_, "] is not supported (at least one bin, a range of positive width)");
    const Layout l = layout(x);
    for (int64_t ch = 0; ch < l.c; ++ch)
      equalize_channel({x.data<float>() + ch * l.channel_stride, l.images, l.h, l.w, l.image_stride, l.row_stride,
                        l.col_stride},
                       lo_, hi_, bins_);
    return x;
  }

 private:
  int64_t bins_;
  double lo_ = 0, hi_ = 255;
};

}  // namespace
LayerPtr make_equalization(Json c) { return std::make_shared<Equalization>(std::move(c)); }
}  // namespace kerascpp::layers
