// Weights with the layers a plan step took in folded into them: the BatchNormalization after a Dense
// or convolution, and a CustomScaleLayer's scale (plan_steps.cpp, plan_conv_steps.cpp). The output
// channel is the last axis of the kernel, as in Keras's Dense (k, units) and convolution
// (*k, in / groups, filters) kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "layers/plan_parts.h"

namespace kerascpp::models {

struct FoldedWeights {
  uint64_t version = 0;  // folded_version() of the variables it was made from
  std::vector<float> kernel, bias;
};

// Variable versions only grow, so their sum changes whenever one of the variables is assigned.
uint64_t folded_version(const VariablePtr& kernel, const VariablePtr& bias,
                        const std::optional<layers::BatchNormParts>& bn);

// kernel * m and bias * m + a per output channel, m = scale * out_scale and a = shift * out_scale,
// with the interpreter's fold of the BatchNormalization's statistics into scale and shift (1 and 0
// without one). bias may be null.
std::shared_ptr<const FoldedWeights> fold_weights(const VariablePtr& kernel, const VariablePtr& bias,
                                                  const std::optional<layers::BatchNormParts>& bn, float out_scale,
                                                  int64_t channels);

}  // namespace kerascpp::models
