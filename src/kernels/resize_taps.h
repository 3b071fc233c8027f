// Where tf.image.resize samples: the input taps and weights of one output row or column, computed in
// float exactly as TensorFlow does (tensorflow/core/kernels/image/resize_{nearest_neighbor,bilinear,
// bicubic}_op.cc with half_pixel_centers=true, align_corners=false, the TF 2 defaults). These decide
// which input pixels are picked, so the reference and the fast kernels share them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace kerascpp::kernels {

// TF's CalculateResizeScale: in / out in float.
inline float resize_scale(int64_t in, int64_t out) {
  return static_cast<float>(in) / static_cast<float>(out);
}

// HalfPixelScalerForNN then floor, clamped to [0, in - 1].
inline int64_t nearest_tap(int64_t o, float scale, int64_t in) {
  const int64_t i =
      std::min(static_cast<int64_t>(std::floor((static_cast<float>(o) + 0.5f) * scale)), in - 1);
  return std::max<int64_t>(i, 0);
}

// HalfPixelScaler: the two neighbours and the weight of the upper one.
struct LinearTaps {
  int64_t lower, upper;
  float lerp;
};
inline LinearTaps bilinear_taps(int64_t o, float scale, int64_t in) {
  const float f = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
  const float fl = std::floor(f);
  return {std::max<int64_t>(static_cast<int64_t>(fl), 0),
          std::min<int64_t>(static_cast<int64_t>(std::ceil(f)), in - 1), f - fl};
}

// Keys cubic (a = -0.5) as TF tabulates it: 1024 steps per pixel, each entry computed in double and
// stored as float. near: |t| in [0, 1]; far: |t| in [1, 2].
constexpr int64_t kCubicTableSize = 1024;
inline float cubic_near(int64_t i) {
  const double a = -0.5, x = static_cast<float>(i * 1.0 / kCubicTableSize);
  return static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
}
inline float cubic_far(int64_t i) {
  const double a = -0.5, x = static_cast<float>(static_cast<float>(i * 1.0 / kCubicTableSize) + 1.0);
  return static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
}

// Four taps around the sample; a tap outside the input gets weight 0 and the rest are renormalised
// (TF's GetWeightsAndIndices with use_keys_cubic).
struct CubicTaps {
  int64_t index[4];
  float weight[4];
};
inline CubicTaps bicubic_taps(int64_t o, float scale, int64_t in) {
  const float f = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
  const int64_t loc = static_cast<int64_t>(std::floor(f));
  const float delta = f - static_cast<float>(loc);
  const int64_t offset = std::lrintf(delta * kCubicTableSize);
  const float w[4] = {cubic_far(offset), cubic_near(offset), cubic_near(kCubicTableSize - offset),
                      cubic_far(kCubicTableSize - offset)};
  CubicTaps t;
  for (int k = 0; k < 4; ++k) {
    const int64_t want = loc - 1 + k;
    t.index[k] = std::min(in - 1, std::max<int64_t>(0, want));
    t.weight[k] = t.index[k] == want ? w[k] : 0.0f;
  }
  const float sum = t.weight[0] + t.weight[1] + t.weight[2] + t.weight[3];
  if (std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
    const float inv = 1.0f / sum;
    for (float& v : t.weight) v *= inv;
  }
  return t;
}

}  // namespace kerascpp::kernels
