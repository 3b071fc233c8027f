// Fast softmax and log_softmax. Both subtract the maximum along the axis before exp, so large
// logits never overflow; the sum of exponentials is accumulated in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/isa/isa_set.h"

namespace kerascpp::kernels::KCPP_ISA {
namespace {

constexpr int64_t kChunk = 64;  // inner positions handled together when inner > 1

// One row along a contiguous axis (inner == 1).
template <bool kLog>
void softmax_row(const float* x, float* y, int64_t axis) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t a = 0; a < axis; ++a) mx = std::max(mx, x[a]);
  double total = 0.0;
  for (int64_t a = 0; a < axis; ++a) {
    float e = std::exp(x[a] - mx);
    if (!kLog) y[a] = e;
    total += e;
  }
  if (kLog) {
    // (x - max) - log(total), as tf.nn.log_softmax: folding max into one float shift first would
    // round it at the scale of max and lose the small result.
    const float lse = static_cast<float>(std::log(total));
    for (int64_t a = 0; a < axis; ++a) y[a] = (x[a] - mx) - lse;
  } else {
    const float inv = static_cast<float>(1.0 / total);
    for (int64_t a = 0; a < axis; ++a) y[a] *= inv;
  }
}

// Up to kChunk neighbouring positions of inner at once; x, y point at (o, 0, i0); rows inner apart.
template <bool kLog>
void softmax_chunk(const float* x, float* y, int64_t axis, int64_t inner, int64_t count) {
  float mx[kChunk];
  double total[kChunk];
  for (int64_t i = 0; i < count; ++i) {
    mx[i] = -std::numeric_limits<float>::infinity();
    total[i] = 0.0;
  }
  for (int64_t a = 0; a < axis; ++a)
    for (int64_t i = 0; i < count; ++i) mx[i] = std::max(mx[i], x[a * inner + i]);
  for (int64_t a = 0; a < axis; ++a) {
    for (int64_t i = 0; i < count; ++i) {
      float e = std::exp(x[a * inner + i] - mx[i]);
      if (!kLog) y[a * inner + i] = e;
      total[i] += e;
    }
  }
  float post[kChunk];  // log: log(total) to subtract; softmax: the factor to multiply by
  for (int64_t i = 0; i < count; ++i)
    post[i] = static_cast<float>(kLog ? std::log(total[i]) : 1.0 / total[i]);
  for (int64_t a = 0; a < axis; ++a)
    for (int64_t i = 0; i < count; ++i)
      y[a * inner + i] = kLog ? (x[a * inner + i] - mx[i]) - post[i] : y[a * inner + i] * post[i];
}

template <bool kLog>
void softmax_impl(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    const float* xo = x + o * axis * inner;
    float* yo = y + o * axis * inner;
    if (inner == 1) {
      softmax_row<kLog>(xo, yo, axis);
      continue;
    }
    for (int64_t i0 = 0; i0 < inner; i0 += kChunk)
      softmax_chunk<kLog>(xo + i0, yo + i0, axis, inner, std::min(kChunk, inner - i0));
  }
}

}  // namespace

void softmax(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  softmax_impl<false>(x, y, outer, axis, inner);
}

void log_softmax(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  softmax_impl<true>(x, y, outer, axis, inner);
}

}  // namespace kerascpp::kernels::KCPP_ISA
