// What ops::lstm_sequence and ops::gru_sequence share (src/ops/*_sequence.cpp): the walk over time
// (from the last step with go_backwards), each step's slice of the input projection, recurrent dropout
// on the state, the rows a mask keeps, and the buffers of their traces.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kerascpp/tensor.h"
#include "kernels/movement.h"

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
  const int64_t shape[2] = {units, width};
  const int perm[2] = {1, 0};
  kernels::transpose(u, ut.data(), sizeof(float), shape, perm, 2);
  return ut;
}

}  // namespace kerascpp::ops::detail
