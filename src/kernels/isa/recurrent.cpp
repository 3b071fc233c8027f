// The LSTM cell's elementwise part (kernels/recurrent.h), per instruction set. With Keras's default
// activations (tanh, sigmoid) one pass computes every gate of an element: the five exps of a unit are
// independent and overlap, where a pass per activation waits on each in turn (an LSTM(8) step at
// batch 1 is a handful of vectors, so latency, not throughput, sets its time).
#include "kernels/isa/fast_math.h"
#include "kernels/isa/isa_set.h"

namespace kerascpp::kernels::KCPP_ISA {

namespace {

// The buffers never overlap (lstm_step's scratch and outputs), which lets the loop vectorise.
void fused(float* __restrict gi, float* __restrict gf, float* __restrict gc, float* __restrict go,
           const float* __restrict c, float* __restrict act_c, float* __restrict h_out, float* __restrict c_out,
           int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float vi = fast_sigmoid(gi[i]), vf = fast_sigmoid(gf[i]), vc = fast_tanh(gc[i]), vo = fast_sigmoid(go[i]);
    const float cn = vf * c[i] + vi * vc, ac = fast_tanh(cn);
    gi[i] = vi, gf[i] = vf, gc[i] = vc, go[i] = vo;
    c_out[i] = cn, act_c[i] = ac, h_out[i] = vo * ac;
  }
}

}  // namespace

void lstm_cell(float* gates, const float* c, int64_t n, const RnnActivations& a, float* act_c, float* h_out,
               float* c_out) {
  float *gi = gates, *gf = gates + n, *gc = gates + 2 * n, *go = gates + 3 * n;
  if (a.act == Unary::tanh && a.ract == Unary::sigmoid) {
    fused(gi, gf, gc, go, c, act_c, h_out, c_out, n);
    return;
  }
  auto activate = [](Unary op, float alpha, float* x, int64_t count) {  // qualified: ADL finds kernels::unary
    if (op != Unary::linear) KCPP_ISA::unary(op, x, x, count, alpha);
  };
  activate(a.ract, a.ract_alpha, gates, 2 * n);  // i and f at once
  activate(a.act, a.act_alpha, gc, n);
  activate(a.ract, a.ract_alpha, go, n);
  for (int64_t i = 0; i < n; ++i) c_out[i] = gf[i] * c[i] + gi[i] * gc[i];
  for (int64_t i = 0; i < n; ++i) act_c[i] = c_out[i];
  activate(a.act, a.act_alpha, act_c, n);
  for (int64_t i = 0; i < n; ++i) h_out[i] = go[i] * act_c[i];
}

}  // namespace kerascpp::kernels::KCPP_ISA
