// What ops::lstm_sequence and ops::gru_sequence share (src/ops/*_sequence.cpp): the walk over time
// (from the last step with go_backwards), each step's slice of the input projection, recurrent dropout
// on the state, and the rows a mask keeps.
#pragma once

#include <algorithm>
#include <cstdint>

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
};

}  // namespace kerascpp::ops::detail
