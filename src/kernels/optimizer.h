// Optimizer updates, element by element, with Keras's float32 arithmetic op by op: one version per
// instruction set (kernels/isa.h), built without fused multiply-adds (-ffp-contract=off, CMakeLists),
// so every set gives the bits the scalar loop gives.
#pragma once

#include <cstdint>

namespace kerascpp::kernels {

// One Adam step's constants, rounded to float32 as keras/src/optimizers/adam.py's tensors are:
// 1 - beta_1, 1 - beta_2, alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t), and epsilon.
struct AdamStep {
  float one_minus_beta_1, one_minus_beta_2, alpha, epsilon;
};

// keras.optimizers.Adam's update of n elements in place: m += (g - m) (1 - beta_1);
// v += (g^2 - v) (1 - beta_2); with amsgrad (vhat not null) vhat = max(vhat, v), read in v's place;
// x -= (m alpha) / (sqrt(v) + epsilon). No two of the buffers overlap.
void adam_update(const float* g, float* x, float* m, float* v, float* vhat, int64_t n, const AdamStep& s);

}  // namespace kerascpp::kernels
