// exp, sigmoid and tanh in plain float arithmetic, with no libm call and no branch, so that a loop of
// them vectorises for the instruction set this file is compiled for (kernels/isa/isa_set.h). libm's
// scalar expf / tanhf cost most of a small recurrent step (measured: 40 % of an LSTM(8) sequence in
// glibc's expm1f and tanhf). Errors: a few float ulp (Cephes' exp polynomial; a rational function
// fitted for tanh); the kernel tests hold them to the reference kernels' libm values at 4e-6
// relative. NaN stays NaN, +-inf saturate.
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

// exp(x) for x <= 0 and not NaN (Cephes expf): x = n ln2 + r with |r| <= ln2 / 2, exp(r) by a
// degree-6 polynomial, times 2^n written into the exponent bits. Below -87.3 (where exp leaves the
// normal floats) it is 0. A NaN gives a number: the caller tells NaN apart after its own arithmetic,
// since a select inside made the compiler repeat that arithmetic (a division) for each arm.
inline float exp_nonpositive_number(float x) {
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
  return x < kMin ? 0.f : y;
}

// 1 / (1 + exp(-v)) without overflow: exp of -|v| only. NaN stays NaN.
inline float fast_sigmoid(float v) {
  const float e = exp_nonpositive_number(-std::fabs(v));
  const float s = 1.f / (1.f + e);
  const float r = v >= 0.f ? s : e * s;
  return v == v ? r : v;
}

// tanh as a rational function, |v| P(v^2) / Q(v^2) (degrees 4 and 4 in v^2), with |v| clamped to 9
// (tanh is 1 in float from 9.01); signed, never above 1. The coefficients were fitted here for
// relative error: 4e-8 in exact arithmetic; in float at most 3.2e-7 with fused multiply-adds and
// 3.8e-7 without (6 ulp, near 1), 1.1e-7 below 0.5 (kernel tests: every 61st float up to 10, on
// every instruction set). No exp, one division, no second path for small |v|: 15 vector operations
// where the exp-based form took 35 with two divisions (0.57 ns an element on AVX-512 then, which
// made a Dense(64, tanh) stack at batch 1,024 slower than ONNX Runtime's). NaN stays NaN, +-inf
// give +-1.
inline float fast_tanh(float v) {
  const float f = std::fabs(v);
  const float a = f > 9.f ? 9.f : f;  // a NaN passes through
  const float z = a * a;
  float p = 1.3354674699428415e-08f;
  p = p * z + 2.060911174339708e-05f;
  p = p * z + 0.0034955907613039017f;
  p = p * z + 0.13381028175354004f;
  p = p * z + 1.f;
  float q = 7.776569646011922e-07f;
  q = q * z + 0.00032856385223567486f;
  q = q * z + 0.02587699331343174f;
  q = q * z + 0.4671434462070465f;
  q = q * z + 1.f;
  const float r = a * p / q;
  return std::copysign(r > 1.f ? 1.f : r, v);
}

}  // namespace
}  // namespace kerascpp::kernels::KCPP_ISA
