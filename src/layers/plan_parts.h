// What the inference plan (models/inference_plan.h) reads of the layers it runs as its own kernels.
// Each recogniser is defined beside its layer's class and answers for that class only: a layer a
// caller supplies under the same Keras class name (custom_objects) is not recognised, and runs
// through its own call().
#pragma once

#include "kerascpp/layer.h"

namespace kerascpp::layers {

class ActivationFn;

// A Dense layer's weights and activation (bias null without use_bias); false for any other layer.
struct DenseParts {
  VariablePtr kernel, bias;
  const ActivationFn* activation = nullptr;
};
bool dense_parts(const Layer& layer, DenseParts* parts);
// The activation of an Activation layer, or null for any other layer.
const ActivationFn* activation_layer_fn(const Layer& layer);
// Layers whose inference output is their input reinterpreted (same floats, same order): Identity,
// Reshape, and Flatten for a channels_last input (or one of rank 2). The layers that act in training
// only derive from InferenceIdentity (regularization/inference_identity.h).
bool is_identity_layer(const Layer& layer);
bool is_reshape_layer(const Layer& layer);
bool flatten_is_view(const Layer& layer, const Shape& input);

}  // namespace kerascpp::layers
