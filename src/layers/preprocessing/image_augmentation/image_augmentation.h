// Base of Keras's image augmentation layers (keras/src/layers/preprocessing/image_preprocessing:
// RandomFlip, RandomRotation, ...): at inference they pass their input through, as Keras does; in
// training they transform each image at random, drawn from the step's seed, the layer's name and the
// layer's `seed` (so a fit with a fixed seed repeats). Input (batch, h, w, c) or one image (h, w, c);
// channels_first: (batch, c, h, w) or (c, h, w). Each layer overrides augment(); the default refuses
// training by name, for a layer added without its transform.
#pragma once

#include <random>
#include <string>

#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {

class ImageAugmentation : public InferenceIdentity {
 public:
  ImageAugmentation(Json given, std::string cls);
  std::string class_name() const override { return class_; }

 protected:
  // One image's layout inside x: images, height, width, channels and the element strides of each.
  struct Layout {
    int64_t images = 1, h = 0, w = 0, c = 0;
    int64_t image_stride = 0, row_stride = 0, col_stride = 0, channel_stride = 0;
  };
  Layout layout(const Tensor& x) const;  // ValueError naming the layer unless rank 3 or 4
  Tensor train(const Tensor& x, std::mt19937_64& rng, const CallContext& ctx) const override;
  // The layer's own transform of x (float32, a fresh copy it may change), `rng` seeded as above.
  virtual Tensor augment(Tensor x, std::mt19937_64& rng) const;
  // A Keras factor: a number f is (-|f|, |f|) (or (0, |f|) with nonnegative_only), a pair (lo, hi).
  std::pair<float, float> factor(const char* key, bool nonnegative_only = false) const;
  // value_range, sorted (Keras's default (0, 255)).
  std::pair<float, float> value_range() const;

  std::string class_;
  bool channels_first_;
  uint64_t seed_;
};

// How the affine augmentations (RandomRotation, RandomZoom, RandomTranslation) sample their input:
// keras.ops.image.affine_transform's fill modes and interpolations.
struct AffineSampling {
  enum class Fill { reflect, wrap, constant, nearest } fill = Fill::reflect;
  bool nearest = false;  // interpolation: nearest, else bilinear
  float fill_value = 0.f;
  static AffineSampling from_config(const Json& config, const std::string& who);
};
// Image n of x (in place) through the projective transform t = [a0, a1, a2, b0, b1, b2, c0, c1]: output
// pixel (x, y) reads the input at ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1.
void affine_transform_image(float* image, const float* source, int64_t h, int64_t w, int64_t c, int64_t row_stride,
                            int64_t col_stride, int64_t channel_stride, const float t[8], const AffineSampling& s);

}  // namespace kerascpp::layers
