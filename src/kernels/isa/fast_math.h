// exp, sigmoid and tanh in plain float arithmetic, with no libm call and no branch, so that a loop of
// them vectorises for the instruction set this file is compiled for (kernels/isa/isa_set.h). libm's
// scalar expf / tanhf cost most of a small recurrent step (measured: 40 % of an LSTM(8) sequence in
// glibc's expm1f and tanhf). Errors: a few float ulp (Cephes' polynomials); the kernel tests hold them
// to the reference kernels' libm values at 4e-6 relative. NaN stays NaN, +-inf saturate.
// Included by kernels/isa/*.cpp only; everything sits in an anonymous namespace inside the set's own.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#ifndef KCPP_ISA
#error "kernels/isa/fast_math.h is for the files compiled per instruction set"
#endif

namespace kerascpp::kernels::KCPP_ISA {
namespace {

// exp(x) for x <= 0 (Cephes expf): x = n ln2 + r with |r| <= ln2 / 2, exp(r) by a degree-6
// polynomial, times 2^n written into the exponent bits. Below -87.3 (where exp leaves the normal
// floats) it is 0.
inline float exp_nonpositive(float x) {
  constexpr float kMin = -87.33654475f;  // ln(FLT_MIN)
  const float xc = x >= kMin ? x : kMin;  // NaN too: no float-to-int conversion of a NaN below
  const float n = std::floor(xc * 1.44269504088896341f + 0.5f);
  float r = xc - n * 0.693359375f;  // ln 2 in two parts, so that n ln 2 is exact enough
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  const float y = p * scale;
  return x < kMin ? 0.f : (x == x ? y : x);  // NaN stays NaN
}

// 1 / (1 + exp(-v)) without overflow: exp of -|v| only.
inline float fast_sigmoid(float v) {
  const float e = exp_nonpositive(-std::fabs(v));
  const float s = 1.f / (1.f + e);
  return v >= 0.f ? s : e * s;
}

// tanh: below |v| = 0.625 Cephes' odd polynomial (no cancellation near 0), above it
// 1 - 2 e / (1 + e) with e = exp(-2 |v|), signed.
inline float fast_tanh(float v) {
  const float z = v * v;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * v + v;
  const float a = std::fabs(v);
  const float e = exp_nonpositive(-2.f * a);
  const float big = std::copysign(1.f - 2.f * e / (1.f + e), v);  // one rounding near 1 at the end
  return a < 0.625f ? small : big;
}

}  // namespace
}  // namespace kerascpp::kernels::KCPP_ISA
