#include "layers/preprocessing/image_augmentation/augmentation_helpers.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kerascpp::layers::aug {

std::pair<float, float> unit_factor(const Json& c, const char* key, float fallback, const std::string& who) {
  const Json f = c.contains(key) && !c[key].is_null() ? c[key] : Json(fallback);
  if (f.is_number()) {
    const float v = f.get<float>();
    KCPP_CHECK(v >= 0.f && v <= 1.f, ValueError, who, ": `", key, "` must be a number (or a list of two numbers) in "
               "the range [0, 1]. Received: ", key, "=", f.dump());
    return {0.f, v};
  }
  KCPP_CHECK(f.is_array() && f.size() == 2 && f[0].is_number() && f[1].is_number() && f[0].get<float>() <= 1.f &&
                 f[1].get<float>() >= 0.f,
             ValueError, who, ": `", key, "` must be a number (or a list of two numbers) in the range [0, 1]. "
             "Received: ", key, "=", f.dump());
  const float a = f[0].get<float>(), b = f[1].get<float>();
  return {std::min(a, b), std::max(a, b)};
}

float uniform(std::mt19937_64& rng, std::pair<float, float> range) {
  return range.first == range.second ? range.first
                                     : std::uniform_real_distribution<float>(range.first, range.second)(rng);
}

bool apply_with_probability(std::mt19937_64& rng, std::pair<float, float> factor) {
  const float p = uniform(rng, factor);
  return uniform(rng, {0.f, 1.f}) < p;
}

float keras_gamma(std::mt19937_64& rng, float alpha) {
  const double g = alpha > 0.f ? std::gamma_distribution<double>(alpha)(rng) : 0.0;
  return std::max(static_cast<float>(g), std::numeric_limits<float>::min());
}

float keras_beta(std::mt19937_64& rng, float alpha) {
  const float x = keras_gamma(rng, alpha), y = keras_gamma(rng, alpha);
  return x / (x + y);
}

std::pair<float, float> crop_bounds(std::mt19937_64& rng, int64_t length, float ratio) {
  const float len = static_cast<float>(length), span = ratio * len;
  const float start = uniform(rng, {0.f, 1.f}) * (len - span);
  return {start, start + span};
}

std::vector<float> gaussian_kernel(int64_t size, float sigma) {
  std::vector<float> k(static_cast<size_t>(size));
  const float mid = (static_cast<float>(size) - 1.f) / 2.f;
  float sum = 0.f;
  for (int64_t i = 0; i < size; ++i) {
    const float x = (static_cast<float>(i) - mid) / sigma;
    sum += k[i] = std::exp(-0.5f * (x * x));
  }
  for (float& v : k) v /= sum;
  return k;
}

void gaussian_blur_plane(const float* in, float* out, int64_t h, int64_t w, int64_t row, int64_t col, int64_t k0,
                         int64_t k1, float s0, float s1) {
  const std::vector<float> kx = gaussian_kernel(k0, s0), ky = gaussian_kernel(k1, s1);
  const int64_t top = (k0 - 1) / 2, left = (k1 - 1) / 2;  // SAME padding of an odd kernel
  if (k0 == k1) {  // the filter is ky[r] * kx[c]: separable, rows then columns
    std::vector<float> tmp(static_cast<size_t>(h * w));
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        float s = 0.f;
        for (int64_t j = 0; j < k1; ++j)
          if (x + j - left >= 0 && x + j - left < w) s += kx[j] * in[y * row + (x + j - left) * col];
        tmp[y * w + x] = s;
      }
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        float s = 0.f;
        for (int64_t i = 0; i < k0; ++i)
          if (y + i - top >= 0 && y + i - top < h) s += ky[i] * tmp[(y + i - top) * w + x];
        out[y * row + x * col] = s;
      }
    return;
  }
  // Keras's (k1, k0) outer product read row-major as (k0, k1).
  std::vector<float> filter(static_cast<size_t>(k0 * k1));
  for (int64_t p = 0; p < k0 * k1; ++p) filter[p] = ky[p / k0] * kx[p % k0];
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      float s = 0.f;
      for (int64_t i = 0; i < k0; ++i) {
        if (y + i - top < 0 || y + i - top >= h) continue;
        const float* line = in + (y + i - top) * row;
        for (int64_t j = 0; j < k1; ++j)
          if (x + j - left >= 0 && x + j - left < w) s += filter[i * k1 + j] * line[(x + j - left) * col];
      }
      out[y * row + x * col] = s;
    }
}

}  // namespace kerascpp::layers::aug
