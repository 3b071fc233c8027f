// lstm_sequence: an LSTM layer's whole loop over time as one op, for training. The forward runs
// kernels::lstm_step per step (the inference loop's arithmetic) and keeps what the backward needs in a
// few flat buffers; the backward runs back through time with no tensor per step, and the recurrent
// kernel's gradient is one product over every step at once (sum_s hd_s^T dz_s = HD^T DZ). Both run
// the batch's blocks of rows on the threads (kernels::for_row_blocks).
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

// What the forward keeps per step s, each (steps, ...) contiguous.
struct LstmTrace {
  int64_t batch, steps, units;
  detail::Buffer pre, gates;  // (steps, 4 batch units): each block's (4, rows, units), gates' inputs and activations
  detail::Buffer c_prev, c_new, act_c, hd;  // (steps, batch, units); hd: h_{s-1} after recurrent dropout
  std::vector<char> keep;  // (steps, batch): the step counted (mask nonzero)
};

}  // namespace

Tensor lstm_sequence(const Tensor& xp, const Tensor& h0, const Tensor& c0, const Tensor& u, const Tensor& rm,
                     const Tensor& mask, bool go_backwards, bool zero_output_for_mask, UnaryOp act, UnaryOp ract) {
  for (const Tensor* t : {&xp, &h0, &c0, &u}) detail::check_float32("lstm_sequence", *t, "input");
  const bool ranks = h0.rank() == 2 && xp.rank() == 3;
  const int64_t batch = ranks ? h0.dim(0) : 0, units = ranks ? h0.dim(1) : 0, n = batch * units;
  KCPP_CHECK(ranks && xp.dim(0) == batch && xp.dim(2) == 4 * units && c0.shape() == h0.shape() &&
                 u.shape() == Shape({units, 4 * units}) && (!rm.defined() || rm.shape() == h0.shape()) &&
                 (!mask.defined() || (mask.dtype() == DType::float32 && mask.shape() == Shape({batch, xp.dim(1)}))),
             ValueError, "lstm_sequence: shapes do not fit: xp ", shape_str(xp.shape()), ", h ", shape_str(h0.shape()),
             ", c ", shape_str(c0.shape()), ", recurrent kernel ", shape_str(u.shape()), ", recurrent dropout mask ",
             rm.defined() ? shape_str(rm.shape()) : std::string("None"), ", mask ",
             mask.defined() ? shape_str(mask.shape()) + " " + std::string(dtype_name(mask.dtype())) : std::string("None"));
  const int64_t steps = xp.dim(1), width = 4 * units;
  const kernels::RnnActivations acts{act, default_alpha(act), ract, default_alpha(ract)};
  Recorder* rec = tape_for({&xp, &h0, &c0, &u});
  const bool recording = rec != nullptr;
  const int64_t kept = recording ? steps : 1;  // without a tape, one step's scratch
  auto tr = std::make_shared<LstmTrace>(LstmTrace{batch, steps, units, detail::Buffer(kept * 4 * n),
                                                   detail::Buffer(kept * 4 * n), detail::Buffer(kept * n),
                                                   detail::Buffer(kept * n), detail::Buffer(kept * n),
                                                   detail::Buffer(kept * n), std::vector<char>(kept * batch)});
  const detail::SequenceWalk walk{xp.data<float>(), mask.defined() ? mask.data<float>() : nullptr,
                                  rm.defined() ? rm.data<float>() : nullptr, batch, steps, width, go_backwards};
  Tensor out = Tensor::empty({batch, steps, 3 * units});
  // Rows [b0, b0 + rows) through every step (kernels::for_row_blocks). In the trace, a step's (batch,
  // units) buffers hold the block at row b0; its gates and their inputs, (4, rows, units) at 4 b0 units.
  // Each block works in its rows of the scratch (made here: nothing allocates on the threads).
  std::vector<float> h_all(h0.data<float>(), h0.data<float>() + n), c_all(c0.data<float>(), c0.data<float>() + n);
  std::vector<float> y_all(n, 0.f), xs_all(4 * n), z_all(4 * n), h_new_all(n);
  auto forward_rows = [&](int64_t b0, int64_t rows) {
    const int64_t m = rows * units, at = b0 * units;
    float *h = h_all.data() + at, *c = c_all.data() + at, *y = y_all.data() + at, *h_new = h_new_all.data() + at;
    float *xs = xs_all.data() + 4 * at, *z = z_all.data() + 4 * at;
    const detail::SequenceWalk w = walk.rows(b0, rows, units);
    float* o = out.data<float>() + b0 * steps * 3 * units;
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = w.time(s), k = recording ? s : 0;  // the trace keeps every step only for a tape
      w.gather(t, xs);
      float* hd = tr->hd.data() + k * n + at;
      w.drop(h, hd, m);
      std::copy(c, c + m, tr->c_prev.data() + k * n + at);
      float* c_new = tr->c_new.data() + k * n + at;
      kernels::lstm_step(xs, hd, c, u.data<float>(), rows, units, acts, z, tr->gates.data() + k * 4 * n + 4 * at,
                         tr->pre.data() + k * 4 * n + 4 * at, tr->act_c.data() + k * n + at, h_new, c_new);
      for (int64_t b = 0; b < rows; ++b) {
        const bool keep = w.keeps(b, t);
        tr->keep[k * batch + b0 + b] = keep;
        const int64_t r = b * units;
        if (keep) {  // a masked step keeps the states and repeats the output (or gives zeros)
          std::copy(h_new + r, h_new + r + units, h + r);
          std::copy(c_new + r, c_new + r + units, c + r);
          std::copy(h_new + r, h_new + r + units, y + r);
        } else if (zero_output_for_mask) {
          std::fill(y + r, y + r + units, 0.f);
        }
        float* row = o + (b * steps + s) * 3 * units;
        std::copy(y + r, y + r + units, row);
        std::copy(h + r, h + r + units, row + units);
        std::copy(c + r, c + r + units, row + 2 * units);
      }
    }
  };
  kernels::for_row_blocks(batch, units, width, forward_rows);
  if (recording)
    rec->record("lstm_sequence", {xp, h0, c0, u}, out, [=](const Tensor& dout) {
      const LstmTrace& T = *tr;
      Tensor dxp = Tensor::empty(xp.shape()), du = Tensor::empty(u.shape());  // every element of dxp is written
      Tensor dh0 = Tensor::empty(h0.shape()), dc0 = Tensor::empty(c0.shape());
      detail::Buffer dz_all(steps * 4 * n);  // (steps, batch, 4 units): each step's dz, rows of (i, f, c, o)
      const detail::Buffer ut = detail::transposed(u.data<float>(), units, width);
      std::vector<float> gy_all(n, 0.f), dh_all(n), dc_all(n), tmp_all(n), dgate_all(4 * n), dh_prev_all(n);
      // Rows [b0, b0 + rows) back through every step, as forward_rows ran them.
      auto backward_rows = [&](int64_t b0, int64_t rows) {
        const int64_t m = rows * units, at = b0 * units;
        const float* d = dout.data<float>() + b0 * steps * 3 * units;
        const float* rmp = rm.defined() ? rm.data<float>() + at : nullptr;
        float* dx = dxp.data<float>() + b0 * steps * width;
        float *gh = dh0.data<float>() + at, *gc = dc0.data<float>() + at;  // d/d h_s, c_s from later steps
        std::fill(gh, gh + m, 0.f);
        std::fill(gc, gc + m, 0.f);
        float *gy = gy_all.data() + at, *dh = dh_all.data() + at, *dc = dc_all.data() + at, *tmp = tmp_all.data() + at;
        float *dgate = dgate_all.data() + 4 * at, *dh_prev = dh_prev_all.data() + at;
        for (int64_t s = steps - 1; s >= 0; --s) {
          const int64_t t = go_backwards ? steps - 1 - s : s;  // (walk's pointers are not kept past the forward)
          const char* keep = T.keep.data() + s * batch + b0;
          for (int64_t b = 0; b < rows; ++b) {
            const float* row = d + (b * steps + s) * 3 * units;
            for (int64_t j = 0; j < units; ++j) {
              const int64_t i = b * units + j;
              const float ty = row[j] + gy[i], th = row[units + j] + gh[i], tc = row[2 * units + j] + gc[i];
              if (keep[b]) {  // y_s = h_s = h', c_s = c'
                dh[i] = th + ty, dc[i] = tc, gy[i] = 0.f;
              } else {  // the states carried, the output repeated (or zero)
                dh[i] = 0.f, dc[i] = 0.f, gh[i] = th, gc[i] = tc, gy[i] = zero_output_for_mask ? 0.f : ty;
              }
            }
          }
          const float* g = T.gates.data() + s * 4 * n + 4 * at;
          const float *gi = g, *gf = g + m, *gg = g + 2 * m, *go = g + 3 * m;
          const float* ac = T.act_c.data() + s * n + at;
          float *di = dgate, *df = di + m, *dg = di + 2 * m, *dgo = di + 3 * m;
          for (int64_t i = 0; i < m; ++i) dgo[i] = dh[i] * ac[i], tmp[i] = dh[i] * go[i];  // h' = o * act(c')
          kernels::unary_grad(act, T.c_new.data() + s * n + at, ac, tmp, tmp, m, acts.act_alpha);
          const float* cp = T.c_prev.data() + s * n + at;
          for (int64_t i = 0; i < m; ++i) {  // c' = f * c + i * g
            const float dct = tmp[i] + dc[i];
            di[i] = dct * gg[i], dg[i] = dct * gi[i], df[i] = dct * cp[i], dc[i] = dct * gf[i];
          }
          float* dz = dz_all.data() + s * 4 * n + 4 * at;  // (rows, 4 units)
          for (int k = 0; k < 4; ++k) {
            const UnaryOp op = k == 2 ? act : ract;
            const float alpha = k == 2 ? acts.act_alpha : acts.ract_alpha;
            kernels::unary_grad(op, T.pre.data() + s * 4 * n + 4 * at + k * m, g + k * m, dgate + k * m, tmp, m, alpha);
            for (int64_t b = 0; b < rows; ++b) {
              std::copy(tmp + b * units, tmp + (b + 1) * units, dz + (b * 4 + k) * units);
              std::copy(tmp + b * units, tmp + (b + 1) * units, dx + (b * steps + t) * width + k * units);
            }
          }
          kernels::matmul(dz, ut.data(), dh_prev, rows, units, width);  // dz u^T
          for (int64_t b = 0; b < rows; ++b) {
            if (!keep[b]) continue;  // its gradients stay the carried ones
            for (int64_t j = 0; j < units; ++j) {
              const int64_t i = b * units + j;
              gh[i] = rmp != nullptr ? dh_prev[i] * rmp[i] : dh_prev[i];
              gc[i] = dc[i];
            }
          }
        }
      };
      kernels::for_row_blocks(batch, units, width, backward_rows);
      // Every step's hd (steps * batch, units) against its dz (steps * batch, 4 units) in one product.
      kernels::matmul_transposed(true, false, T.hd.data(), dz_all.data(), du.data<float>(), units, width,
                                 steps * batch);
      return Grads{dxp, dh0, dc0, du};
    });
  return out;
}

}  // namespace kerascpp::ops
