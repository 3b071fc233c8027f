// One LSTM step's forward (keras.layers.LSTMCell): the arithmetic that both the inference loop
// (layers/rnn/rnn_cell.cpp) and the taped op ops::lstm_step run, so that the two give the same numbers.
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
#pragma once

#include <cstdint>

#include "kernels/kinds.h"

namespace kerascpp::kernels {

struct LstmActivations {
  Unary act;  // activation, on the candidate c and on c'
  float act_alpha;
  Unary ract;  // recurrent_activation, on the gates i, f, o
  float ract_alpha;
};

void lstm_step(const float* xp, const float* hd, const float* c, const float* u, int64_t batch, int64_t units,
               const LstmActivations& a, float* z, float* gates, float* pre, float* act_c, float* h_out,
               float* c_out);

}  // namespace kerascpp::kernels
