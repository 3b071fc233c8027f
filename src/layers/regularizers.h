// keras.regularizers L1, L2 and L1L2 as penalties built from ops (so the tape differentiates them):
// the weight regularisers of any layer (kernel_regularizer, bias_regularizer, ...) and activity
// regularisers.
//
//   Regularizer r = regularizer_from_config(config["kernel_regularizer"], "Layer 'dense' (Dense)");
//   if (r.active()) loss = ops::binary(add, loss, r.penalty(kernel));
#pragma once

#include <string>

#include "kerascpp/layer.h"

namespace kerascpp::layers {

struct Regularizer {
  float l1 = 0.f, l2 = 0.f;
  // Set for a regulariser kerascpp cannot compute: the model still loads and predicts, and
  // penalty() (training) throws NotImplementedError with this message.
  std::string unsupported;
  bool active() const { return l1 != 0.f || l2 != 0.f || !unsupported.empty(); }
  // l1 * sum(|x|) + l2 * sum(x^2), a scalar.
  Tensor penalty(const Tensor& x) const;
};

// From a Keras regularizer: null (none), a name ("l1", "l2", "l1_l2") or
// {"class_name": "L1" | "L2" | "L1L2", "config": {...}} in either Keras dialect. Other classes
// (OrthogonalRegularizer, custom ones) give an `unsupported` one naming `who`; a malformed config is
// a ValueError.
Regularizer regularizer_from_config(const Json& j, const std::string& who);

// An activity regulariser's loss for output x, divided by the batch size as Keras 3 does.
Tensor activity_loss(float l1, float l2, const Tensor& x);

}  // namespace kerascpp::layers
