// The recurrent kernels of inference plans (plan_recurrent_steps.cpp): SimpleRNN, LSTM and GRU (and
// RNN over one of their cells) with elementwise activations, stateful ones included. make_plan_step
// (plan_steps.cpp) asks here.
#pragma once

#include <memory>
#include <string>

#include "models/inference_plan.h"

namespace kerascpp::models {

// The step for a call of a recurrent layer on sequences x (batch, steps, features); null with `why`
// empty for a layer that is not recurrent, null with `why` set for a call the plan refuses.
std::unique_ptr<PlanStep> make_recurrent_plan_step(const Layer& layer, const Shape& x, const Shape& output,
                                                   std::string* why);

}  // namespace kerascpp::models
