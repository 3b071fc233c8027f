// Base of the layers that only act in training (Dropout, SpatialDropout*, GaussianNoise,
// GaussianDropout, AlphaDropout, ActivityRegularization, StochasticDepth): at inference they return
// their input; in training they run train() with a random stream of their own, drawn from the
// step's seed and the layer's name (so two dropout layers never share a mask).
#pragma once

#include <functional>
#include <random>

#include "layers/config_utils.h"
#include "ops/ops.h"

namespace kerascpp::layers {

// The random stream of one layer in one training step: from the step's seed and the layer's name, so
// that two layers never share a mask.
inline std::mt19937_64 layer_rng(const CallContext& ctx, const std::string& layer_name) {
  return std::mt19937_64(ctx.seed ^ (std::hash<std::string>()(layer_name) * 0x9E3779B97F4A7C15ull));
}

// Keras's dropout (keras/src/random/random.py): x * mask / (1 - rate), the mask drawn over
// noise_shape (1 on the dims it shares) and broadcast to x.
inline Tensor keras_dropout(const Tensor& x, float rate, const Shape& noise_shape, std::mt19937_64& rng) {
  if (rate <= 0.f) return x;
  std::uniform_real_distribution<float> u(0.f, 1.f);
  const float keep = 1.f - rate;
  Tensor mask = Tensor::empty(noise_shape);
  for (int64_t i = 0; i < mask.size(); ++i) mask.data<float>()[i] = u(rng) < keep ? 1.f / keep : 0.f;
  return ops::binary(ops::BinaryOp::multiply, x, mask);
}

class InferenceIdentity : public Layer {
 public:
  using Layer::Layer;
  // Whether call() returns its input unchanged at inference (inference plans run such a layer as a
  // view); false for a subclass that does more there (tf_keras's RandomCrop crops and resizes).
  virtual bool identity_at_inference() const { return true; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override {
    if (!ctx.training) return in;
    std::mt19937_64 rng = layer_rng(ctx, name());
    return {train(in[0], rng, ctx)};
  }

 protected:
  virtual Tensor train(const Tensor& x, std::mt19937_64& rng, const CallContext& ctx) const = 0;

  // A float32 tensor of `shape` drawn from f(rng).
  template <typename F>
  static Tensor draw(const Shape& shape, F f) {
    Tensor t = Tensor::empty(shape);
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = f();
    return t;
  }
  static Tensor dropout(const Tensor& x, float rate, const Shape& noise_shape, std::mt19937_64& rng) {
    return keras_dropout(x, rate, noise_shape, rng);
  }
};

}  // namespace kerascpp::layers
