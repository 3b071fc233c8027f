// gru_sequence: a GRU layer's whole loop over time (reset_after=True) as one op, for training, as
// lstm_sequence.cpp does for the LSTM: the forward runs kernels::gru_step per step and keeps what the
// backward needs in flat buffers; the backward runs back through time with no tensor per step, and
// the recurrent kernel's and recurrent bias's gradients are one product / one sum over every step.
// Both run the batch's blocks of rows on the threads (kernels::for_row_blocks).
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
  detail::Buffer pre, gates;  // (steps, 3 batch units): each block's (3, rows, units), z, r, hh's inputs and activations
  detail::Buffer rec;         // (steps, batch, 3 units): hd @ u + rb
  detail::Buffer h_prev, hd;  // (steps, batch, units): the state before the step, and after dropout
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
  auto tr = std::make_shared<GruTrace>(GruTrace{detail::Buffer(kept * 3 * n), detail::Buffer(kept * 3 * n),
                                                 detail::Buffer(kept * 3 * n), detail::Buffer(kept * n),
                                                 detail::Buffer(kept * n), std::vector<char>(kept * batch)});
  const detail::SequenceWalk walk{xp.data<float>(), mask.defined() ? mask.data<float>() : nullptr,
                                  rm.defined() ? rm.data<float>() : nullptr, batch, steps, width, go_backwards};
  Tensor out = Tensor::empty({batch, steps, 2 * units});
  // Rows [b0, b0 + rows) through every step (kernels::for_row_blocks), in their rows of the scratch and
  // the trace; a step's gates and their inputs hold the block's (3, rows, units) at 3 b0 units.
  std::vector<float> h_all(h0.data<float>(), h0.data<float>() + n), y_all(n, 0.f), xs_all(3 * n), h_new_all(n);
  auto forward_rows = [&](int64_t b0, int64_t rows) {
    const int64_t m = rows * units, at = b0 * units;
    float *h = h_all.data() + at, *y = y_all.data() + at, *xs = xs_all.data() + 3 * at, *h_new = h_new_all.data() + at;
    const detail::SequenceWalk w = walk.rows(b0, rows, units);
    float* o = out.data<float>() + b0 * steps * 2 * units;
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = w.time(s), k = recording ? s : 0;  // the trace keeps every step only for a tape
      w.gather(t, xs);
      float* hd = tr->hd.data() + k * n + at;
      w.drop(h, hd, m);
      std::copy(h, h + m, tr->h_prev.data() + k * n + at);
      kernels::gru_step(xs, h, hd, u.data<float>(), rb.defined() ? rb.data<float>() : nullptr, rows, units, acts,
                        tr->rec.data() + k * 3 * n + 3 * at, tr->gates.data() + k * 3 * n + 3 * at,
                        tr->pre.data() + k * 3 * n + 3 * at, h_new);
      for (int64_t b = 0; b < rows; ++b) {
        const bool keep = w.keeps(b, t);
        tr->keep[k * batch + b0 + b] = keep;
        const int64_t r = b * units;
        if (keep) {  // a masked step keeps the state and repeats the output (or gives zeros)
          std::copy(h_new + r, h_new + r + units, h + r);
          std::copy(h_new + r, h_new + r + units, y + r);
        } else if (zero_output_for_mask) {
          std::fill(y + r, y + r + units, 0.f);
        }
        float* row = o + (b * steps + s) * 2 * units;
        std::copy(y + r, y + r + units, row);
        std::copy(h + r, h + r + units, row + units);
      }
    }
  };
  kernels::for_row_blocks(batch, units, width, forward_rows);
  std::vector<Tensor> inputs{xp, h0, u};
  if (rb.defined()) inputs.push_back(rb);
  if (recording)
    rec->record("gru_sequence", inputs, out, [=](const Tensor& dout) {
      const GruTrace& T = *tr;
      // Every element of dxp is written (each step's gates for each row).
      Tensor dxp = Tensor::empty(xp.shape()), du = Tensor::empty(u.shape()), dh0 = Tensor::empty(h0.shape());
      detail::Buffer drec_all(steps * 3 * n);  // (steps, batch, 3 units): each step's recurrent product's gradient
      const detail::Buffer ut = detail::transposed(u.data<float>(), units, width);
      std::vector<float> gy_all(n, 0.f), dh_all(n), da_all(3 * n), dp_all(3 * n), dh_prev_all(n);
      // Rows [b0, b0 + rows) back through every step, as forward_rows ran them.
      auto backward_rows = [&](int64_t b0, int64_t rows) {
        const int64_t m = rows * units, at = b0 * units;
        const float* d = dout.data<float>() + b0 * steps * 2 * units;
        const float* rmp = rm.defined() ? rm.data<float>() + at : nullptr;
        float* gh = dh0.data<float>() + at;  // d/d h_s from later steps
        std::fill(gh, gh + m, 0.f);
        float *gy = gy_all.data() + at, *dh = dh_all.data() + at, *da = da_all.data() + 3 * at;
        float *dp = dp_all.data() + 3 * at, *dh_prev = dh_prev_all.data() + at;
        for (int64_t s = steps - 1; s >= 0; --s) {
          const int64_t t = go_backwards ? steps - 1 - s : s;  // (walk's pointers are not kept past the forward)
          const char* keep = T.keep.data() + s * batch + b0;
          for (int64_t b = 0; b < rows; ++b) {
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
          const float* g = T.gates.data() + s * 3 * n + 3 * at;
          const float *z = g, *r = g + m, *hh = g + 2 * m;
          const float* hp = T.h_prev.data() + s * n + at;
          const float* rc = T.rec.data() + s * 3 * n + 3 * at;
          float *dz = da, *dr = dz + m, *dhh = dz + 2 * m;  // d/d the gates' activations
          for (int64_t i = 0; i < m; ++i) dz[i] = dh[i] * (hp[i] - hh[i]), dhh[i] = dh[i] * (1.f - z[i]);
          const float* pre = T.pre.data() + s * 3 * n + 3 * at;
          kernels::unary_grad(act, pre + 2 * m, hh, dhh, dp + 2 * m, m, acts.act_alpha);
          for (int64_t b = 0; b < rows; ++b)  // hh's input: x_h + r * rec_h
            for (int64_t j = 0; j < units; ++j) dr[b * units + j] = dp[2 * m + b * units + j] * rc[b * width + 2 * units + j];
          kernels::unary_grad(ract, pre, g, da, dp, 2 * m, acts.ract_alpha);
          float* drec = drec_all.data() + s * 3 * n + 3 * at;  // (rows, 3 units)
          for (int64_t b = 0; b < rows; ++b) {
            float* dx = dxp.data<float>() + ((b0 + b) * steps + t) * width;
            for (int64_t j = 0; j < units; ++j) {
              const int64_t i = b * units + j;
              dx[j] = drec[b * width + j] = dp[i];
              dx[units + j] = drec[b * width + units + j] = dp[m + i];
              dx[2 * units + j] = dp[2 * m + i];
              drec[b * width + 2 * units + j] = dp[2 * m + i] * r[i];
            }
          }
          kernels::matmul(drec, ut.data(), dh_prev, rows, units, width);  // drec u^T
          for (int64_t b = 0; b < rows; ++b) {
            if (!keep[b]) continue;  // its gradient stays the carried one
            for (int64_t j = 0; j < units; ++j) {
              const int64_t i = b * units + j;
              gh[i] = dh[i] * z[i] + (rmp != nullptr ? dh_prev[i] * rmp[i] : dh_prev[i]);
            }
          }
        }
      };
      kernels::for_row_blocks(batch, units, width, backward_rows);
      // Every step's hd against its recurrent product's gradient, in one product; the bias's, one sum.
      kernels::matmul_transposed(true, false, T.hd.data(), drec_all.data(), du.data<float>(), units, width,
                                 steps * batch);
      Grads grads{dxp, dh0, du};
      if (rb.defined()) {
        Tensor drb = Tensor::zeros(rb.shape());
        for (int64_t k = 0; k < steps * batch; ++k)
          for (int64_t j = 0; j < width; ++j) drb.data<float>()[j] += drec_all.data()[k * width + j];
        grads.push_back(drb);
      }
      return grads;
    });
  return out;
}

}  // namespace kerascpp::ops
