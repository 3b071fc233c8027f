// gru_sequence: a GRU layer's whole loop over time (reset_after=True) as one op, for training, as
// lstm_sequence.cpp does for the LSTM: the forward runs kernels::gru_step per step and keeps what the
// backward needs in flat buffers; the backward runs back through time with no tensor per step, and
// the recurrent kernel's and recurrent bias's gradients are one product / one sum over every step.
#include <algorithm>
#include <memory>

#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/recurrent.h"
#include "ops/checks.h"
#include "ops/ops.h"
#include "ops/sequence_walk.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

struct GruTrace {
  std::vector<float> pre, gates;  // (steps, 3, batch, units): z, r, hh's inputs and activations
  std::vector<float> rec;         // (steps, batch, 3 units): hd @ u + rb
  std::vector<float> h_prev, hd;  // (steps, batch, units): the state before the step, and after dropout
  std::vector<char> keep;         // (steps, batch)
};

}  // namespace

Tensor gru_sequence(const Tensor& xp, const Tensor& h0, const Tensor& u, const Tensor& rb, const Tensor& rm,
                    const Tensor& mask, bool go_backwards, bool zero_output_for_mask, UnaryOp act, UnaryOp ract) {
  for (const Tensor* t : {&xp, &h0, &u}) detail::check_float32("gru_sequence", *t, "input");
  const bool ranks = h0.rank() == 2 && xp.rank() == 3;
  const int64_t batch = ranks ? h0.dim(0) : 0, units = ranks ? h0.dim(1) : 0, n = batch * units, width = 3 * units;
  KCPP_CHECK(ranks && xp.dim(0) == batch && xp.dim(2) == width &&
                 u.shape() == Shape({units, width}) && (!rb.defined() || rb.shape() == Shape({width})) &&
                 (!rm.defined() || rm.shape() == h0.shape()) &&
                 (!mask.defined() || (mask.dtype() == DType::float32 && mask.shape() == Shape({batch, xp.dim(1)}))),
             ValueError, "gru_sequence: shapes do not fit: xp ", shape_str(xp.shape()), ", h ", shape_str(h0.shape()),
             ", recurrent kernel ", shape_str(u.shape()), ", recurrent bias ",
             rb.defined() ? shape_str(rb.shape()) : std::string("None"), ", recurrent dropout mask ",
             rm.defined() ? shape_str(rm.shape()) : std::string("None"), ", mask ",
             mask.defined() ? shape_str(mask.shape()) + " " + std::string(dtype_name(mask.dtype())) : std::string("None"));
  const int64_t steps = xp.dim(1);
  const kernels::RnnActivations acts{act, default_alpha(act), ract, default_alpha(ract)};
  Recorder* rec = tape_for({&xp, &h0, &u, &rb});
  const bool recording = rec != nullptr;
  const int64_t kept = recording ? steps : 1;  // without a tape, one step's scratch
  auto tr = std::make_shared<GruTrace>();
  *tr = {std::vector<float>(kept * 3 * n), std::vector<float>(kept * 3 * n), std::vector<float>(kept * 3 * n),
         std::vector<float>(kept * n), std::vector<float>(kept * n), std::vector<char>(kept * batch)};
  std::vector<float> h(h0.data<float>(), h0.data<float>() + n), y(n, 0.f), xs(3 * n), h_new(n);
  const detail::SequenceWalk walk{xp.data<float>(), mask.defined() ? mask.data<float>() : nullptr,
                                  rm.defined() ? rm.data<float>() : nullptr, batch, steps, width, go_backwards};
  Tensor out = Tensor::empty({batch, steps, 2 * units});
  float* o = out.data<float>();
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = walk.time(s), k = recording ? s : 0;  // the trace keeps every step only for a tape
    walk.gather(t, xs.data());
    float* hd = tr->hd.data() + k * n;
    walk.drop(h.data(), hd, n);
    std::copy(h.begin(), h.end(), tr->h_prev.begin() + k * n);
    kernels::gru_step(xs.data(), h.data(), hd, u.data<float>(), rb.defined() ? rb.data<float>() : nullptr, batch, units,
                      acts, tr->rec.data() + k * 3 * n, tr->gates.data() + k * 3 * n, tr->pre.data() + k * 3 * n,
                      h_new.data());
    for (int64_t b = 0; b < batch; ++b) {
      const bool keep = walk.keeps(b, t);
      tr->keep[k * batch + b] = keep;
      const int64_t r = b * units;
      if (keep) {  // a masked step keeps the state and repeats the output (or gives zeros)
        std::copy(h_new.begin() + r, h_new.begin() + r + units, h.begin() + r);
        std::copy(h_new.begin() + r, h_new.begin() + r + units, y.begin() + r);
      } else if (zero_output_for_mask) {
        std::fill(y.begin() + r, y.begin() + r + units, 0.f);
      }
      float* row = o + (b * steps + s) * 2 * units;
      std::copy(y.begin() + r, y.begin() + r + units, row);
      std::copy(h.begin() + r, h.begin() + r + units, row + units);
    }
  }
  std::vector<Tensor> inputs{xp, h0, u};
  if (rb.defined()) inputs.push_back(rb);
  if (recording)
    rec->record("gru_sequence", inputs, out, [=](const Tensor& dout) {
      const GruTrace& T = *tr;
      const float* d = dout.data<float>();
      Tensor dxp = Tensor::zeros(xp.shape()), du = Tensor::empty(u.shape()), dh0 = Tensor::empty(h0.shape());
      float* gh = dh0.data<float>();  // d/d h_s from later steps
      std::fill(gh, gh + n, 0.f);
      std::vector<float> gy(n, 0.f), dh(n), tmp(n), da(3 * n), dp(3 * n), drec_all(steps * 3 * n), dh_prev(n);
      for (int64_t s = steps - 1; s >= 0; --s) {
        const int64_t t = go_backwards ? steps - 1 - s : s;  // (walk's pointers are not kept past the forward)
        const char* keep = T.keep.data() + s * batch;
        for (int64_t b = 0; b < batch; ++b) {
          const float* row = d + (b * steps + s) * 2 * units;
          for (int64_t j = 0; j < units; ++j) {
            const int64_t i = b * units + j;
            const float ty = row[j] + gy[i], th = row[units + j] + gh[i];
            if (keep[b]) {  // y_s = h_s = h'
              dh[i] = th + ty, gy[i] = 0.f;
            } else {  // the state carried, the output repeated (or zero)
              dh[i] = 0.f, gh[i] = th, gy[i] = zero_output_for_mask ? 0.f : ty;
            }
          }
        }
        const float* g = T.gates.data() + s * 3 * n;
        const float *z = g, *r = g + n, *hh = g + 2 * n;
        const float* hp = T.h_prev.data() + s * n;
        const float* rc = T.rec.data() + s * 3 * n;
        float *dz = da.data(), *dr = dz + n, *dhh = dz + 2 * n;  // d/d the gates' activations
        for (int64_t i = 0; i < n; ++i) dz[i] = dh[i] * (hp[i] - hh[i]), dhh[i] = dh[i] * (1.f - z[i]);
        const float* pre = T.pre.data() + s * 3 * n;
        kernels::unary_grad(act, pre + 2 * n, hh, dhh, dp.data() + 2 * n, n, acts.act_alpha);
        for (int64_t b = 0; b < batch; ++b)  // hh's input: x_h + r * rec_h
          for (int64_t j = 0; j < units; ++j) dr[b * units + j] = dp[2 * n + b * units + j] * rc[b * width + 2 * units + j];
        kernels::unary_grad(ract, pre, g, da.data(), dp.data(), 2 * n, acts.ract_alpha);
        float* drec = drec_all.data() + s * 3 * n;  // (batch, 3 units)
        for (int64_t b = 0; b < batch; ++b) {
          float* dx = dxp.data<float>() + (b * steps + t) * width;
          for (int64_t j = 0; j < units; ++j) {
            const int64_t i = b * units + j;
            dx[j] = drec[b * width + j] = dp[i];
            dx[units + j] = drec[b * width + units + j] = dp[n + i];
            dx[2 * units + j] = dp[2 * n + i];
            drec[b * width + 2 * units + j] = dp[2 * n + i] * r[i];
          }
        }
        kernels::matmul_transposed(false, true, drec, u.data<float>(), dh_prev.data(), batch, units, width);
        for (int64_t b = 0; b < batch; ++b) {
          if (!keep[b]) continue;  // its gradient stays the carried one
          for (int64_t j = 0; j < units; ++j) {
            const int64_t i = b * units + j;
            gh[i] = dh[i] * z[i] + (rm.defined() ? dh_prev[i] * rm.data<float>()[i] : dh_prev[i]);
          }
        }
      }
      // Every step's hd against its recurrent product's gradient, in one product; the bias's, one sum.
      kernels::matmul_transposed(true, false, T.hd.data(), drec_all.data(), du.data<float>(), units, width,
                                 steps * batch);
      Grads grads{dxp, dh0, du};
      if (rb.defined()) {
        Tensor drb = Tensor::zeros(rb.shape());
        for (int64_t k = 0; k < steps * batch; ++k)
          for (int64_t j = 0; j < width; ++j) drb.data<float>()[j] += drec_all[k * width + j];
        grads.push_back(drb);
      }
      return grads;
    });
  return out;
}

}  // namespace kerascpp::ops
