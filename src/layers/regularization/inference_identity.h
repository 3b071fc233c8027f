// Base of the layers that only act in training (Dropout, SpatialDropout*, GaussianNoise,
// GaussianDropout, AlphaDropout, ActivityRegularization): at inference they return their input.
#pragma once

#include "layers/config_utils.h"

namespace kerascpp::layers {

class InferenceIdentity : public Layer {
 public:
  using Layer::Layer;
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    return in;
  }
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override {
    KCPP_CHECK(!ctx.training, NotImplementedError, "Layer '", name(), "' (", class_name(),
               ") does not support training yet");
    return in;
  }
};

}  // namespace kerascpp::layers
