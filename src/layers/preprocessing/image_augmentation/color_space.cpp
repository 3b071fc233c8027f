#include "layers/preprocessing/image_augmentation/color_space.h"

#include <algorithm>
#include <cmath>

namespace kerascpp::layers {
namespace color {

std::array<float, 3> rgb_to_hsv(float r, float g, float b) {
  const float v = std::max({r, g, b});
  const float range = v - std::min({r, g, b});
  const float s = v > 0.f ? range / v : 0.f;
  const float norm = (1.f / range) * (1.f / 6.f);  // inf when range is 0: h is 0 then
  float h = r == v ? norm * (g - b) : g == v ? norm * (b - r) + 2.f / 6.f : norm * (r - g) + 4.f / 6.f;
  if (!(range > 0.f)) h = 0.f;
  if (h < 0.f) h += 1.f;
  return {h, s, v};
}

std::array<float, 3> hsv_to_rgb(float h, float s, float v) {
  const float dh = h * 6.f;
  const float dr = std::min(std::max(std::fabs(dh - 3.f) - 1.f, 0.f), 1.f);
  const float dg = std::min(std::max(-std::fabs(dh - 2.f) + 2.f, 0.f), 1.f);
  const float db = std::min(std::max(-std::fabs(dh - 4.f) + 2.f, 0.f), 1.f);
  const float one_s = -s + 1.f;
  return {(one_s + s * dr) * v, (one_s + s * dg) * v, (one_s + s * db) * v};
}

float grayscale(float r, float g, float b) { return r * 0.2989f + g * 0.5870f + b * 0.1140f; }

float to_range(float v, Range from, Range to) {
  if (from == to) return v;
  return (v - from.first) / (from.second - from.first) * (to.second - to.first) + to.first;
}

float uniform(std::mt19937_64& rng, float lo, float hi) {
  const float u = static_cast<float>(rng() >> 41) * 0x1p-23f;  // 23 random bits, as TensorFlow draws floats
  return u * (hi - lo) + lo;
}

void brightness(const Image& im, float delta, Range vr) {
  im.each_pixel([&](float* p) {
    for (int64_t k = 0; k < im.c; ++k) p[k * im.channel] = clip(p[k * im.channel] + delta, vr);
  });
}

float brightness_delta(std::mt19937_64& rng, Range factor, Range vr) {
  return uniform(rng, factor.first, factor.second) * (vr.second - vr.first);
}

void contrast(const Image& im, float f, Range vr) {
  for (int64_t k = 0; k < im.c; ++k) {
    double sum = 0;
    for (int64_t y = 0; y < im.h; ++y)
      for (int64_t x = 0; x < im.w; ++x) sum += im.at(y, x, k);
    const float mean = static_cast<float>(sum / static_cast<double>(im.h * im.w));
    for (int64_t y = 0; y < im.h; ++y)
      for (int64_t x = 0; x < im.w; ++x) im.at(y, x, k) = clip((im.at(y, x, k) - mean) * f + mean, vr);
  }
}

float contrast_factor(std::mt19937_64& rng, Range factor) {
  return uniform(rng, 1.f - factor.first, 1.f + factor.second);
}

void saturation(const Image& im, float k, Range vr) {
  im.each_pixel([&](float* p) {
    const auto hsv = rgb_to_hsv(p[0], p[im.channel], p[2 * im.channel]);
    const auto rgb = hsv_to_rgb(hsv[0], clip(hsv[1] * k, vr), hsv[2]);
    for (int64_t i = 0; i < 3; ++i) p[i * im.channel] = rgb[i];
  });
}

float saturation_scale(std::mt19937_64& rng, Range factor) {
  const float f = uniform(rng, factor.first, factor.second);
  return f / (1.f - f + 1e-7f);  // keras.config.epsilon()
}

void hue(const Image& im, float delta, Range vr) {
  const Range unit{0.f, 1.f};
  im.each_pixel([&](float* p) {
    auto hsv = rgb_to_hsv(to_range(p[0], vr, unit), to_range(p[im.channel], vr, unit),
                          to_range(p[2 * im.channel], vr, unit));
    float h = hsv[0] + delta;
    if (h > 1.f) h -= 1.f;
    if (h < 0.f) h += 1.f;
    const auto rgb = hsv_to_rgb(h, hsv[1], hsv[2]);
    for (int64_t i = 0; i < 3; ++i) p[i * im.channel] = to_range(clip(rgb[i], 0.f, 1.f), unit, vr);
  });
}

float hue_delta(std::mt19937_64& rng, Range factor) {
  const float sign = uniform(rng, 0.f, 1.f) > 0.5f ? -1.f : 1.f;
  return sign * uniform(rng, factor.first, factor.second) * 0.5f;
}

}  // namespace color

std::vector<color::Image> ColorAugmentation::images(Tensor& x, Channels need) const {
  const Layout l = layout(x);
  KCPP_CHECK(need == Channels::any || l.c == 3 || (need == Channels::rgb_or_gray && l.c == 1), ValueError, "Layer '",
             name(), "' (", class_, ") expects RGB images (3 channels", need == Channels::rgb ? "" : ", or 1",
             "). Received: inputs.shape=", shape_str(x.shape()));
  std::vector<color::Image> out;
  for (int64_t n = 0; n < l.images; ++n)
    out.push_back({x.data<float>() + n * l.image_stride, l.h, l.w, l.c, l.row_stride, l.col_stride, l.channel_stride});
  return out;
}

color::Range ColorAugmentation::bounded_factor(const char* key, float lo, float hi, const Json& fallback) const {
  Json f = config_.value(key, Json());
  if (f.is_null()) f = fallback;
  const bool pair = f.is_array() && f.size() == 2 && f[0].is_number() && f[1].is_number();
  const bool ok = pair ? f[0].get<float>() <= hi && f[1].get<float>() >= lo
                       : f.is_number() && f.get<float>() >= lo && f.get<float>() <= hi;
  KCPP_CHECK(ok, ValueError, "Layer '", name(), "' (", class_, "): `", key, "` must be a number in [", lo, ", ", hi,
             "] or a pair (a, b) with a <= ", hi, " and b >= ", lo, ". Received: ", key, "=", f.dump());
  if (!pair) {
    const float v = std::fabs(f.get<float>());
    return {std::max(-v, lo), v};
  }
  const float a = f[0].get<float>(), b = f[1].get<float>();
  return {std::min(a, b), std::max(a, b)};
}

color::Range ColorAugmentation::given_value_range() const {
  const Json r = config_.value("value_range", Json::array({0, 255}));
  KCPP_CHECK(r.is_array() && r.size() == 2 && r[0].is_number() && r[1].is_number(), ValueError, "Layer '", name(),
             "' (", class_, "): `value_range` must be a pair of numbers. Received: value_range=", r.dump());
  return {r[0].get<float>(), r[1].get<float>()};
}

}  // namespace kerascpp::layers
