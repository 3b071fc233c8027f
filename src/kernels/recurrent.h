// One recurrent step's forward, the arithmetic that both the inference loop (layers/rnn/rnn_cell.cpp) and
// the taped ops (ops::lstm_step, lstm_sequence, gru_sequence) run, so that they give the same numbers.
//
// lstm_step (keras.layers.LSTMCell):
//   z  = xp + hd @ u                         (batch, 4 units): the gates' inputs, Keras's order i, f, c, o
//   c' = ract(z_f) * c + ract(z_i) * act(z_c)
//   h' = ract(z_o) * act(c')
// xp: the step's input projection (x @ kernel + bias); hd: h after recurrent dropout; u: the recurrent
// kernel (units, 4 units). Writes h_out and c_out (batch, units); gates (4, batch, units): each gate's
// activation, i, f, c, o; pre (4, batch, units): each gate's input, for the backward (nullptr: not
// kept); act_c (batch, units): act(c'); z: scratch of 4 batch units floats.
//
//   kernels::lstm_step(xp, h, c, u, batch, units, {Unary::tanh, 0.f, Unary::sigmoid, 0.f}, z, gates,
//                      nullptr, act_c, h_next, c_next);
//
// gru_step (keras.layers.GRUCell with reset_after=True, Keras's default):
//   rec = hd @ u + rb                        (batch, 3 units), gates z, r, h in that order
//   z = ract(x_z + rec_z), r = ract(x_r + rec_r), hh = act(x_h + r * rec_h)
//   h' = z * h + (1 - z) * hh
// xp: the step's input projection with the input bias; h: the state, hd: h after recurrent dropout;
// u: (units, 3 units); rb: the recurrent bias (3 units), or nullptr. Writes h_out (batch, units); rec
// (batch, 3 units); gates (3, batch, units): z, r, hh; pre (3, batch, units): their inputs (nullptr:
// not kept).
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/kinds.h"
#include "kernels/matmul.h"
#include "kernels/parallel.h"

namespace kerascpp::kernels {

struct RnnActivations {
  Unary act;  // activation, on the candidate c and on c'
  float act_alpha;
  Unary ract;  // recurrent_activation, on the gates i, f, o
  float ract_alpha;
};

void lstm_step(const float* xp, const float* hd, const float* c, const float* u, int64_t batch, int64_t units,
               const RnnActivations& a, float* z, float* gates, float* pre, float* act_c, float* h_out,
               float* c_out);
void gru_step(const float* xp, const float* h, const float* hd, const float* u, const float* rb, int64_t batch,
              int64_t units, const RnnActivations& a, float* rec, float* gates, float* pre, float* h_out);
// lstm_step's elementwise part, per instruction set (kernels/isa.h): gates (4, n) hold the inputs of
// i, f, c, o and are replaced by their activations; c_out = f * c + i * c~, act_c = act(c_out),
// h_out = o * act_c (n = batch * units); no two of the buffers overlap. Keras's default activations
// run in one pass.
void lstm_cell(float* gates, const float* c, int64_t n, const RnnActivations& a, float* act_c, float* h_out,
               float* c_out);

// Rows of a recurrent loop the threads share: a batch's rows are independent through time, so its
// blocks of kRowBlock rows each run the whole sequence, on the engine's threads (kernels/parallel.h;
// one fork a sequence, where a step's small product splits no further). The blocks depend on the
// shapes alone, never on the thread count, and the small product gives each row the same bits in a
// block of any size (tests/cpp/ops/recurrent_test.cpp), so results are the same on any number of
// threads. A step's product too big for the small path (batch x units x width) keeps the batch
// whole: the BLAS splits it between the threads instead. Used by the taped sequence ops
// (ops::lstm_sequence, gru_sequence) and the inference plan's recurrent steps.
inline constexpr int64_t kRowBlock = 16;

// f(b0, rows) for each block of rows.
template <typename F>
void for_row_blocks(int64_t batch, int64_t units, int64_t width, F&& f) {
  if (batch <= kRowBlock || !matmul_takes_small(batch, width, units)) return f(int64_t{0}, batch);
  const int64_t blocks = (batch + kRowBlock - 1) / kRowBlock;
  parallel_chunks(
      blocks, 1,
      [&](int64_t first, int64_t end) {
        for (int64_t k = first; k < end; ++k) f(k * kRowBlock, std::min(kRowBlock, batch - k * kRowBlock));
      },
      1);
}

}  // namespace kerascpp::kernels
