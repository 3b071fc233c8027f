// What Keras 3's color augmentation layers share (keras/src/layers/preprocessing/image_preprocessing:
// RandomHue, RandomSaturation, RandomColorJitter, RandomGrayscale, RandomColorDegeneration, ...):
// TensorFlow's tf.image.rgb_to_hsv / hsv_to_rgb and keras.ops.image.rgb_to_grayscale per pixel, float32
// as TensorFlow computes them; Keras's _transform_value_range and clip; the per-image transforms that
// RandomColorJitter composes; and ColorAugmentation, the base that reads Keras's bounded factors.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace color {

using Range = std::pair<float, float>;

// One image of a batch, in place: pixel (y, x), channel k at data[y * row + x * col + k * channel].
struct Image {
  float* data;
  int64_t h, w, c, row, col, channel;
  float& at(int64_t y, int64_t x, int64_t k) const { return data[y * row + x * col + k * channel]; }
  template <typename F>
  void each_pixel(F&& f) const {  // f(float* pixel); channel k at pixel[k * channel]
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) f(data + y * row + x * col);
  }
};

// TensorFlow's RGBToHSV / HSVToRGB kernels (tensorflow/core/kernels/image/colorspace_op.h) on one pixel:
// any scale works for rgb (V = max, S = range / V, H in [0, 1)); hsv_to_rgb does not wrap H or clip.
std::array<float, 3> rgb_to_hsv(float r, float g, float b);
std::array<float, 3> hsv_to_rgb(float h, float s, float v);
// keras.ops.image.rgb_to_grayscale: 0.2989 r + 0.5870 g + 0.1140 b.
float grayscale(float r, float g, float b);
// tf.clip_by_value: max(min(v, hi), lo), also for a value_range given high first.
inline float clip(float v, float lo, float hi) { return std::max(std::min(v, hi), lo); }
inline float clip(float v, Range r) { return clip(v, r.first, r.second); }
// BaseImagePreprocessingLayer._transform_value_range: (v - from0) / (from1 - from0) * (to1 - to0) + to0,
// the value itself when the ranges are equal.
float to_range(float v, Range from, Range to);
// keras.random.uniform(minval=lo, maxval=hi) in float32: lo + (hi - lo) * u, u in [0, 1) (lo when hi == lo).
float uniform(std::mt19937_64& rng, float lo, float hi);

// The transforms of one image with its draw, as Keras's transform_images computes them. vr is the
// layer's value_range as that layer reads it (sorted or as given).
// RandomBrightness: x + delta, clipped to vr; its draw: U(lo, hi) * (vr1 - vr0).
void brightness(const Image& im, float delta, Range vr);
float brightness_delta(std::mt19937_64& rng, Range factor, Range vr);
// RandomContrast: (x - mean) * f + mean, mean per channel over the image, clipped to vr; f ~ U(1 - lo, 1 + hi).
void contrast(const Image& im, float f, Range vr);
float contrast_factor(std::mt19937_64& rng, Range factor);
// RandomSaturation: S * k clipped to vr (Keras clips S to the value_range, not to [0, 1]) on the raw
// values; k = f / (1 - f + epsilon), f ~ U(lo, hi). No clip after.
void saturation(const Image& im, float k, Range vr);
float saturation_scale(std::mt19937_64& rng, Range factor);
// RandomHue: to [0, 1] from vr, H + delta wrapped once into [0, 1], back to RGB clipped to [0, 1], back to
// vr; delta = +-U(lo, hi) / 2, the sign - with probability 1/2.
void hue(const Image& im, float delta, Range vr);
float hue_delta(std::mt19937_64& rng, Range factor);

}  // namespace color

// A color augmentation: Keras's factor checks and the images of x, each as a color::Image.
class ColorAugmentation : public ImageAugmentation {
 public:
  using ImageAugmentation::ImageAugmentation;

 protected:
  enum class Channels { any, rgb, rgb_or_gray };
  // x's images; ValueError naming the layer when the channels are not what `need` says (tf.image's HSV
  // ops take 3 channels, rgb_to_grayscale 1 or 3).
  std::vector<color::Image> images(Tensor& x, Channels need = Channels::any) const;
  // BaseImagePreprocessingLayer._set_factor with _FACTOR_BOUNDS (lo, hi): a number f in [lo, hi] is
  // (max(-|f|, lo), |f|); a pair (a, b) with a <= hi and b >= lo is sorted. ValueError otherwise.
  // `fallback` stands for a missing or null key (Keras's default).
  color::Range bounded_factor(const char* key, float lo, float hi, const Json& fallback = Json()) const;
  // Keras's value_range as given, unsorted (RandomHue, RandomInvert, RandomColorJitter keep it so).
  color::Range given_value_range() const;
};

}  // namespace kerascpp::layers
