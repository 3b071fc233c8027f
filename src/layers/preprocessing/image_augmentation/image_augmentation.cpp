#include "layers/preprocessing/image_augmentation/image_augmentation.h"

#include <cmath>

namespace kerascpp::layers {

ImageAugmentation::ImageAugmentation(Json given, std::string cls)
    : InferenceIdentity(std::move(given)),
      class_(std::move(cls)),
      channels_first_(get<std::string>(config(), "data_format", "channels_last") == "channels_first"),
      seed_(static_cast<uint64_t>(get<int64_t>(config(), "seed", 0))) {}

ImageAugmentation::Layout ImageAugmentation::layout(const Tensor& x) const {
  KCPP_CHECK(x.rank() == 3 || x.rank() == 4, ValueError, "Layer '", name(), "' (", class_,
             ") expects images of rank 3 or 4. Received: inputs.shape=", shape_str(x.shape()));
  Layout l;
  const int off = x.rank() - 3;  // 1 when batched
  l.images = off ? x.dim(0) : 1;
  const int h = off + (channels_first_ ? 1 : 0), w = h + 1, c = channels_first_ ? off : off + 2;
  l.h = x.dim(h), l.w = x.dim(w), l.c = x.dim(c);
  l.image_stride = l.h * l.w * l.c;
  l.channel_stride = channels_first_ ? l.h * l.w : 1;
  l.col_stride = channels_first_ ? 1 : l.c;
  l.row_stride = l.w * l.col_stride;
  return l;
}

Tensor ImageAugmentation::train(const Tensor& x, std::mt19937_64& rng, const CallContext&) const {
  std::mt19937_64 own(rng() ^ (seed_ * 0x9E3779B97F4A7C15ull));
  return augment(x.dtype() == DType::float32 ? x.copy() : x.astype(DType::float32), own);
}

Tensor ImageAugmentation::augment(Tensor, std::mt19937_64&) const {
  KCPP_THROW(NotImplementedError, "Layer '", name(), "' (", class_, ") passes its input through at inference, as Keras "
             "does; its training transform is not supported by kerascpp. Freeze the model's augmentation or "
             "remove it for training.");
}

std::pair<float, float> ImageAugmentation::factor(const char* key, bool nonnegative_only) const {
  const Json f = config_.value(key, Json());
  if (f.is_number()) {
    const float v = std::fabs(f.get<float>());
    return {nonnegative_only ? 0.f : -v, v};
  }
  KCPP_CHECK(f.is_array() && f.size() == 2 && f[0].is_number() && f[1].is_number(), ValueError, "Layer '", name(), "' (",
             class_, "): `", key, "` must be a number or a pair of numbers. Received: ", key, "=", f.dump());
  const float a = f[0].get<float>(), b = f[1].get<float>();
  return {std::min(a, b), std::max(a, b)};
}

std::pair<float, float> ImageAugmentation::value_range() const {
  const Json r = config_.value("value_range", Json::array({0, 255}));
  KCPP_CHECK(r.is_array() && r.size() == 2 && r[0].is_number() && r[1].is_number(), ValueError, "Layer '", name(), "' (",
             class_, "): `value_range` must be a pair of numbers. Received: value_range=", r.dump());
  return {std::min(r[0].get<float>(), r[1].get<float>()), std::max(r[0].get<float>(), r[1].get<float>())};
}

AffineSampling AffineSampling::from_config(const Json& c, const std::string& who) {
  AffineSampling s;
  const std::string fill = get<std::string>(c, "fill_mode", "reflect"), interp = get<std::string>(c, "interpolation", "bilinear");
  if (fill == "reflect") s.fill = Fill::reflect;
  else if (fill == "wrap") s.fill = Fill::wrap;
  else if (fill == "constant") s.fill = Fill::constant;
  else if (fill == "nearest") s.fill = Fill::nearest;
  else KCPP_THROW(NotImplementedError, who, ": fill_mode='", fill, "' is not supported (reflect, wrap, constant, nearest)");
  KCPP_CHECK(interp == "bilinear" || interp == "nearest", NotImplementedError, who, ": interpolation='", interp,
             "' is not supported (bilinear, nearest)");
  s.nearest = interp == "nearest";
  s.fill_value = get<float>(c, "fill_value", 0.f);
  return s;
}

namespace {
// A coordinate outside [0, len - 1] mapped back as TensorFlow's ImageProjectiveTransform maps it.
float map_coordinate(float v, int64_t len, AffineSampling::Fill fill) {
  const float n = static_cast<float>(len);
  if (fill == AffineSampling::Fill::reflect && len > 1) {
    const float period = 2 * n;
    if (v < 0) {
      if (v < -period) v += period * std::floor(-v / period);
      v = v < -n ? v + period : -v - 1;
    } else if (v > n - 1) {
      v -= period * std::floor(v / period);
      if (v >= n) v = period - v - 1;
    }
  } else if (fill == AffineSampling::Fill::wrap && len > 1) {
    const float sz = n - 1;  // TensorFlow divides by len - 1 and steps by len
    if (v < 0) v += n * (std::floor(-v / sz) + 1);
    else if (v > n - 1) v -= n * std::floor(v / sz);
  } else if (fill == AffineSampling::Fill::constant) {
    return std::clamp(v, -2.f, n + 1);  // out of range reads fill_value (kept in int64's range)
  }
  return std::clamp(v, 0.f, n - 1);
}
}  // namespace

void affine_transform_image(float* image, const float* src, int64_t h, int64_t w, int64_t c, int64_t row_stride,
                            int64_t col_stride, int64_t channel_stride, const float t[8], const AffineSampling& s) {
  auto read = [&](int64_t y, int64_t x, int64_t ch) {
    if (y < 0 || y >= h || x < 0 || x >= w) return s.fill_value;
    return src[y * row_stride + x * col_stride + ch * channel_stride];
  };
  for (int64_t oy = 0; oy < h; ++oy)
    for (int64_t ox = 0; ox < w; ++ox) {
      const float fx = static_cast<float>(ox), fy = static_cast<float>(oy);
      const float k = t[6] * fx + t[7] * fy + 1.f;
      const float px = (t[0] * fx + t[1] * fy + t[2]) / k, py = (t[3] * fx + t[4] * fy + t[5]) / k;
      float* out = image + oy * row_stride + ox * col_stride;
      if (k == 0.f || !std::isfinite(px) || !std::isfinite(py)) {  // as TensorFlow: no projection, fill_value
        for (int64_t ch = 0; ch < c; ++ch) out[ch * channel_stride] = s.fill_value;
        continue;
      }
      const float ix = map_coordinate(px, w, s.fill), iy = map_coordinate(py, h, s.fill);
      for (int64_t ch = 0; ch < c; ++ch) {
        float v;
        if (s.nearest) {
          v = read(static_cast<int64_t>(std::round(iy)), static_cast<int64_t>(std::round(ix)), ch);
        } else {
          const float y0 = std::floor(iy), x0 = std::floor(ix);
          const auto yi = static_cast<int64_t>(y0), xi = static_cast<int64_t>(x0);
          const float top = (x0 + 1 - ix) * read(yi, xi, ch) + (ix - x0) * read(yi, xi + 1, ch);
          const float bottom = (x0 + 1 - ix) * read(yi + 1, xi, ch) + (ix - x0) * read(yi + 1, xi + 1, ch);
          v = (y0 + 1 - iy) * top + (iy - y0) * bottom;
        }
        out[ch * channel_stride] = v;
      }
    }
}

}  // namespace kerascpp::layers
