// The spatial kernels of inference plans (plan_conv_steps.cpp): convolutions, with BatchNormalization
// folded into their weights and a residual Add and relu run inside them, poolings and zero padding.
// make_plan_step (plan_steps.cpp) asks here first.
#pragma once

#include <memory>
#include <string>

#include "models/inference_plan.h"

namespace kerascpp::models {

// The step for a call of a convolution, pooling, global pooling or ZeroPadding layer on x; null with
// `why` empty for a layer of none of those classes, null with `why` set for a call the plan refuses.
std::unique_ptr<PlanStep> make_spatial_plan_step(const Layer& layer, const Shape& x, const Shape& output,
                                                 std::string* why);

}  // namespace kerascpp::models
