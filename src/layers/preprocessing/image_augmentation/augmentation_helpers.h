// What Keras 3's random image augmentations share (RandomShear, RandomPerspective, RandomErasing,
// RandomGaussianBlur, RandomElasticTransform, CutMix, MixUp): their factor arguments bounded to [0, 1],
// the per-image "apply with probability U(factor)" draw, keras.ops.image.gaussian_blur and
// keras.random.beta as the TensorFlow backend computes them (namespace aug).
#pragma once

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kerascpp/layer.h"

namespace kerascpp::layers::aug {

// BaseImagePreprocessingLayer._set_factor with _FACTOR_BOUNDS (0, 1), for config[key] (`fallback` when
// missing): a number f in [0, 1] is (0, f); a pair (a, b) with a <= 1 and b >= 0 is (min, max).
// ValueError naming `who` and the key otherwise.
std::pair<float, float> unit_factor(const Json& config, const char* key, float fallback, const std::string& who);
// U(lo, hi) in float32 (lo itself when the range is one value).
float uniform(std::mt19937_64& rng, std::pair<float, float> range);
// Keras's per-image gate: p ~ U(factor), the transform applies when U(0, 1) < p.
bool apply_with_probability(std::mt19937_64& rng, std::pair<float, float> factor);
// Gamma(alpha, 1) in float32, at least FLT_MIN as tf.random.stateless_gamma floors it.
float keras_gamma(std::mt19937_64& rng, float alpha);
// keras.random.beta(alpha, alpha) in float32 on the TensorFlow backend: X / (X + Y), X and Y ~ Gamma(alpha),
// each at least FLT_MIN as tf.random.stateless_gamma floors them (so alpha ~ 0 gives 0.5).
float keras_beta(std::mt19937_64& rng, float alpha);
// A box of an image: column x in [x0, x1) and row y in [y0, y1) (float32 bounds, as Keras compares them).
struct Box {
  float x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  bool contains(int64_t x, int64_t y) const {
    const float fx = static_cast<float>(x), fy = static_cast<float>(y);
    return fx >= x0 && fx < x1 && fy >= y0 && fy < y1;
  }
};
// Keras's _compute_crop_bounds: a span of ratio * length at U(0, 1) * (length - span).
std::pair<float, float> crop_bounds(std::mt19937_64& rng, int64_t length, float ratio);

// keras.ops.image.gaussian_blur's 1-D kernel: exp(-((i - (size - 1) / 2) / sigma)^2 / 2), normalised (float32).
std::vector<float> gaussian_kernel(int64_t size, float sigma);
// One plane of h x w values (element strides row, col; `out` has the same strides) through
// keras.ops.image.gaussian_blur(kernel_size=(k0, k1), sigma=(s0, s1)) on the TensorFlow backend: a
// depthwise convolution, padding SAME with zeros, of the (k0 rows, k1 columns) filter that Keras builds
// as the outer product of the row kernel (k1, s1) and the column kernel (k0, s0) and reshapes to
// (k0, k1) (for k0 == k1: vertical taps by the s1 kernel, horizontal ones by the s0 kernel).
void gaussian_blur_plane(const float* in, float* out, int64_t h, int64_t w, int64_t row, int64_t col, int64_t k0,
                         int64_t k1, float s0, float s1);

}  // namespace kerascpp::layers::aug
