// Fast max / mean along the middle axis. When inner > 1 (channels_last pooling: (n, h*w, c)) the loop
// runs along inner, which is contiguous, in chunks held on the stack; when inner == 1
// (channels_first: (n*c, h*w, 1)) it runs along the contiguous axis with independent partial results.
#include <algorithm>
#include <limits>

#include "kernels/isa/isa_set.h"

namespace kerascpp::kernels::KCPP_ISA {
namespace {

constexpr int64_t kChunk = 64;
constexpr int kLanes = 8;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

float row_max(const float* x, int64_t n) {
  float part[kLanes];
  std::fill(part, part + kLanes, kNegInf);
  int64_t a = 0;
  for (; a + kLanes <= n; a += kLanes)
    for (int j = 0; j < kLanes; ++j) part[j] = x[a + j] > part[j] ? x[a + j] : part[j];
  float m = kNegInf;
  for (; a < n; ++a) m = x[a] > m ? x[a] : m;
  for (int j = 0; j < kLanes; ++j) m = part[j] > m ? part[j] : m;
  return m;
}

double row_sum(const float* x, int64_t n) {
  double part[kLanes] = {};
  int64_t a = 0;
  for (; a + kLanes <= n; a += kLanes)
    for (int j = 0; j < kLanes; ++j) part[j] += x[a + j];
  double s = 0.0;
  for (; a < n; ++a) s += x[a];
  for (int j = 0; j < kLanes; ++j) s += part[j];
  return s;
}

}  // namespace

void reduce_max(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    const float* xo = x + o * axis * inner;
    if (inner == 1) {
      y[o] = row_max(xo, axis);
      continue;
    }
    for (int64_t i0 = 0; i0 < inner; i0 += kChunk) {
      const int64_t count = std::min(kChunk, inner - i0);
      float* yo = y + o * inner + i0;
      std::fill(yo, yo + count, kNegInf);
      for (int64_t a = 0; a < axis; ++a) {
        const float* row = xo + a * inner + i0;
        for (int64_t i = 0; i < count; ++i) yo[i] = row[i] > yo[i] ? row[i] : yo[i];
      }
    }
  }
}

void reduce_mean(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  double acc[kChunk];
  const double n = static_cast<double>(axis);
  for (int64_t o = 0; o < outer; ++o) {
    const float* xo = x + o * axis * inner;
    if (inner == 1) {
      y[o] = static_cast<float>(row_sum(xo, axis) / n);
      continue;
    }
    for (int64_t i0 = 0; i0 < inner; i0 += kChunk) {
      const int64_t count = std::min(kChunk, inner - i0);
      std::fill(acc, acc + count, 0.0);
      for (int64_t a = 0; a < axis; ++a) {
        const float* row = xo + a * inner + i0;
        for (int64_t i = 0; i < count; ++i) acc[i] += row[i];
      }
      for (int64_t i = 0; i < count; ++i) y[o * inner + i0 + i] = static_cast<float>(acc[i] / n);
    }
  }
}

}  // namespace kerascpp::kernels::KCPP_ISA
