// keras.initializers (keras/src/initializers/): the values a weight starts from when a model is built
// from a config without weights (model_from_json / model_from_config); load_model never runs them, the
// file's values go straight into the buffers. Every class of Keras 3 and tf_keras but STFT, by class
// name, snake_case name or alias ("uniform", "normal", "one", "zero"), with their config arguments:
//   Zeros, Ones, Constant(value), Identity(gain), RandomNormal(mean, stddev), RandomUniform(minval,
//   maxval), TruncatedNormal(mean, stddev) (redrawn beyond 2 stddev), VarianceScaling(scale, mode,
//   distribution, input_axes, output_axes) and its Glorot / He / Lecun Normal / Uniform, Orthogonal(gain).
// A seed in the config gives the same values at every call (as Keras's seeded initializers do); no seed
// draws from the caller's generator. The numbers are not Keras's (another generator), the
// distributions are: tests/python/test_initializers.py holds them to Keras's.
//
//   Initializer init = Initializer::from_config("glorot_uniform", "layer 'dense' (Dense)");
//   init.fill(kernel, rng);
#pragma once

#include <random>
#include <string>
#include <vector>

#include "kerascpp/layer.h"

namespace kerascpp::layers {

class Initializer {
 public:
  // A Keras initializer: a name, or {"class_name": ..., "config": {...}} (either Keras). ValueError naming
  // `who` for an unknown one or a bad argument.
  static Initializer from_config(const Json& j, const std::string& who);
  // Fills t (float32) for its shape; ValueError naming who where the shape does not fit (Identity: 2-D,
  // Orthogonal: 2-D or more).
  void fill(Tensor& t, std::mt19937_64& rng) const;

 private:
  enum class Kind { constant, identity, normal, uniform, truncated_normal, variance_scaling, orthogonal };
  Kind kind_ = Kind::constant;
  std::string who_;
  double a_ = 0, b_ = 0;  // constant: value; normal / truncated: mean, stddev; uniform: min, max; gain
  double scale_ = 1;
  std::string mode_, distribution_;  // VarianceScaling
  std::vector<int> input_axes_, output_axes_;
  bool seeded_ = false;
  uint64_t seed_ = 0;
};

// The fans of a weight shape as Keras computes them (compute_fans): (fan_in, fan_out).
std::pair<double, double> compute_fans(const Shape& shape, const std::vector<int>& input_axes = {},
                                       const std::vector<int>& output_axes = {});

// Every weight of `layer` from its Keras initializer (Layer::initialize), through the layers inside it
// (nested models, wrapped layers, RNN cells): a model built from a config, a layer built in code.
void initialize_weights(Layer& layer, std::mt19937_64& rng);

}  // namespace kerascpp::layers
