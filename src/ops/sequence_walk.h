// What ops::lstm_sequence and ops::gru_sequence share (src/ops/*_sequence.cpp): the walk over time
// (from the last step with go_backwards), each step's slice of the input projection, recurrent dropout
// on the state, the rows a mask keeps, and the batch's blocks of rows that run on the threads.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kerascpp/tensor.h"
#include "kernels/matmul.h"
#include "kernels/parallel.h"

namespace kerascpp::ops::detail {

struct SequenceWalk {
  const float* xp;    // (batch, steps, width): every step's input projection
  const float* mask;  // (batch, steps), nonzero where a step counts; nullptr: every step counts
  const float* rm;    // (batch, units): recurrent dropout's mask; nullptr: none
  int64_t batch, steps, width;
  bool go_backwards;

  // The time index of processing step s.
  int64_t time(int64_t s) const { return go_backwards ? steps - 1 - s : s; }
  // Step t of xp into out (batch, width).
  void gather(int64_t t, float* out) const {
    for (int64_t b = 0; b < batch; ++b)
      std::copy(xp + (b * steps + t) * width, xp + (b * steps + t + 1) * width, out + b * width);
  }
  // hd = h * rm (a copy of h without dropout); n = batch * units.
  void drop(const float* h, float* hd, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) hd[i] = rm != nullptr ? h[i] * rm[i] : h[i];
  }
  // Whether row b counts at time t.
  bool keeps(int64_t b, int64_t t) const { return mask == nullptr || mask[b * steps + t] != 0.f; }
  // The walk over rows [b0, b0 + rows) of the batch alone.
  SequenceWalk rows(int64_t b0, int64_t count, int64_t units) const {
    return {xp + b0 * steps * width, mask != nullptr ? mask + b0 * steps : nullptr,
            rm != nullptr ? rm + b0 * units : nullptr, count, steps, width, go_backwards};
  }
};

// A float buffer of a sequence op's trace or scratch: a tensor's storage, uninitialised, so that inside
// fit's mapping-cache scope (core/mapping_cache.h) a big one reuses the last step's pages instead of
// faulting in and clearing fresh ones.
struct Buffer {
  Tensor t;
  explicit Buffer(int64_t size) : t(Tensor::empty({size})) {}
  float* data() const { return t.data<float>(); }
};

// u (units, width) laid out as u^T (width, units), for the backward's d h = dz u^T as a plain product.
inline Buffer transposed(const float* u, int64_t units, int64_t width) {
  Buffer ut(width * units);
  for (int64_t j = 0; j < units; ++j)
    for (int64_t p = 0; p < width; ++p) ut.data()[p * units + j] = u[j * width + p];
  return ut;
}

// Rows of a sequence the threads share: a batch's rows are independent through time, so its blocks
// of kRowBlock rows each run the whole sequence, on the engine's threads (kernels/parallel.h; one
// fork a sequence, where a step's small product splits no further). The blocks depend on the shapes
// alone, never on the thread count, and the small product gives each row the same bits in a block
// of any size (tests/cpp/ops/recurrent_test.cpp), so results are the same on any number of threads.
// A step's product too big for the small path (batch x units x width of it) keeps the batch whole:
// the BLAS splits it between the threads instead.
inline constexpr int64_t kRowBlock = 16;

// f(b0, rows) for each block of rows.
template <typename F>
void for_row_blocks(int64_t batch, int64_t units, int64_t width, F&& f) {
  if (batch <= kRowBlock || !kernels::matmul_takes_small(batch, width, units))
    return f(int64_t{0}, batch);
  const int64_t blocks = (batch + kRowBlock - 1) / kRowBlock;
  kernels::parallel_chunks(
      blocks, 1,
      [&](int64_t first, int64_t end) {
        for (int64_t k = first; k < end; ++k) f(k * kRowBlock, std::min(kRowBlock, batch - k * kRowBlock));
      },
      1);
}

}  // namespace kerascpp::ops::detail
