// Fast sum and l2_normalize along the middle axis of x: (outer, axis, inner), accumulated in double.
#include <algorithm>
#include <cmath>

#include "kernels/isa/isa_set.h"

namespace kerascpp::kernels::KCPP_ISA {
namespace {

constexpr int64_t kChunk = 64;  // inner positions handled together when inner > 1
constexpr int kLanes = 8;       // independent partial sums along a contiguous axis

// Sum of f(x[a]) over a contiguous row. Independent partial sums let the compiler vectorise a
// reduction that strict IEEE order would otherwise keep sequential.
template <typename F>
double row_sum(const float* x, int64_t n, F f) {
  double part[kLanes] = {};
  int64_t a = 0;
  for (; a + kLanes <= n; a += kLanes)
    for (int j = 0; j < kLanes; ++j) part[j] += f(double(x[a + j]));
  double total = 0.0;
  for (; a < n; ++a) total += f(double(x[a]));
  for (int j = 0; j < kLanes; ++j) total += part[j];
  return total;
}

// acc[0:count] = sum over a of f(x[a * inner + i]); x points at (o, 0, i0).
template <typename F>
void chunk_sum(const float* x, int64_t axis, int64_t inner, int64_t count, double* acc, F f) {
  for (int64_t i = 0; i < count; ++i) acc[i] = 0.0;
  for (int64_t a = 0; a < axis; ++a)
    for (int64_t i = 0; i < count; ++i) acc[i] += f(double(x[a * inner + i]));
}

inline double identity(double v) { return v; }
inline double square(double v) { return v * v; }

}  // namespace

void sum(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  double acc[kChunk];
  for (int64_t o = 0; o < outer; ++o) {
    const float* xo = x + o * axis * inner;
    if (inner == 1) {
      y[o] = static_cast<float>(row_sum(xo, axis, identity));
      continue;
    }
    for (int64_t i0 = 0; i0 < inner; i0 += kChunk) {
      int64_t count = std::min(kChunk, inner - i0);
      chunk_sum(xo + i0, axis, inner, count, acc, identity);
      for (int64_t i = 0; i < count; ++i) y[o * inner + i0 + i] = static_cast<float>(acc[i]);
    }
  }
}

void l2_normalize(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner, float epsilon) {
  double acc[kChunk];
  float inv[kChunk];
  for (int64_t o = 0; o < outer; ++o) {
    const float* xo = x + o * axis * inner;
    float* yo = y + o * axis * inner;
    if (inner == 1) {
      const float s =
          static_cast<float>(1.0 / std::sqrt(std::max(row_sum(xo, axis, square), double(epsilon))));
      for (int64_t a = 0; a < axis; ++a) yo[a] = xo[a] * s;
      continue;
    }
    for (int64_t i0 = 0; i0 < inner; i0 += kChunk) {
      int64_t count = std::min(kChunk, inner - i0);
      chunk_sum(xo + i0, axis, inner, count, acc, square);
      for (int64_t i = 0; i < count; ++i)
        inv[i] = static_cast<float>(1.0 / std::sqrt(std::max(acc[i], double(epsilon))));
      for (int64_t a = 0; a < axis; ++a)
        for (int64_t i = 0; i < count; ++i) yo[a * inner + i0 + i] = xo[a * inner + i0 + i] * inv[i];
    }
  }
}

}  // namespace kerascpp::kernels::KCPP_ISA
