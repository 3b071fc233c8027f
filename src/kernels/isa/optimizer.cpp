// Optimizer updates per instruction set (kernels/optimizer.h). This file is built with
// -ffp-contract=off and -fno-math-errno (CMakeLists): the loops vectorise, and IEEE sqrt and division
// give each element the bits of the scalar loop, on every set.
#include <algorithm>
#include <cmath>

#include "kernels/isa/isa_set.h"

namespace kerascpp::kernels::KCPP_ISA {
namespace {

template <bool kAmsgrad>
void adam_loop(const float* __restrict g, float* __restrict x, float* __restrict m, float* __restrict v,
               float* __restrict vhat, int64_t n, float one_minus_b1, float one_minus_b2, float alpha, float eps) {
  for (int64_t i = 0; i < n; ++i) {
    m[i] += (g[i] - m[i]) * one_minus_b1;
    v[i] += (g[i] * g[i] - v[i]) * one_minus_b2;
    float vi = v[i];
    if constexpr (kAmsgrad) vi = vhat[i] = std::max(vhat[i], v[i]);
    x[i] -= (m[i] * alpha) / (std::sqrt(vi) + eps);
  }
}

}  // namespace

void adam_update(const float* g, float* x, float* m, float* v, float* vhat, int64_t n, const AdamStep& s) {
  if (vhat)
    adam_loop<true>(g, x, m, v, vhat, n, s.one_minus_beta_1, s.one_minus_beta_2, s.alpha, s.epsilon);
  else
    adam_loop<false>(g, x, m, v, nullptr, n, s.one_minus_beta_1, s.one_minus_beta_2, s.alpha, s.epsilon);
}

}  // namespace kerascpp::kernels::KCPP_ISA
