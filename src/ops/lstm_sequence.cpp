// lstm_sequence: an LSTM layer's whole loop over time as one op, for training. The forward runs
// kernels::lstm_step per step (the inference loop's arithmetic) and keeps what the backward needs in a
// few flat buffers; the backward runs back through time with no tensor per step, and the recurrent
// kernel's gradient is one product over every step at once (sum_s hd_s^T dz_s = HD^T DZ).
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
  std::vector<float> pre, gates;  // (steps, 4, batch, units): each gate's input and activation
  std::vector<float> c_prev, c_new, act_c, hd;  // (steps, batch, units); hd: h_{s-1} after recurrent dropout
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
  auto tr = std::make_shared<LstmTrace>();
  *tr = {batch, steps, units, std::vector<float>(kept * 4 * n), std::vector<float>(kept * 4 * n),
         std::vector<float>(kept * n), std::vector<float>(kept * n), std::vector<float>(kept * n),
         std::vector<float>(kept * n), std::vector<char>(kept * batch)};
  std::vector<float> h(h0.data<float>(), h0.data<float>() + n), c(c0.data<float>(), c0.data<float>() + n);
  std::vector<float> y(n, 0.f), xs(4 * n), z(4 * n), h_new(n);
  const detail::SequenceWalk walk{xp.data<float>(), mask.defined() ? mask.data<float>() : nullptr,
                                  rm.defined() ? rm.data<float>() : nullptr, batch, steps, width, go_backwards};
  Tensor out = Tensor::empty({batch, steps, 3 * units});
  float* o = out.data<float>();
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = walk.time(s), k = recording ? s : 0;  // the trace keeps every step only for a tape
    walk.gather(t, xs.data());
    float* hd = tr->hd.data() + k * n;
    walk.drop(h.data(), hd, n);
    std::copy(c.begin(), c.end(), tr->c_prev.begin() + k * n);
    float* c_new = tr->c_new.data() + k * n;
    kernels::lstm_step(xs.data(), hd, c.data(), u.data<float>(), batch, units, acts, z.data(),
                       tr->gates.data() + k * 4 * n, tr->pre.data() + k * 4 * n, tr->act_c.data() + k * n, h_new.data(),
                       c_new);
    for (int64_t b = 0; b < batch; ++b) {
      const bool keep = walk.keeps(b, t);
      tr->keep[k * batch + b] = keep;
      const int64_t r = b * units;
      if (keep) {  // a masked step keeps the states and repeats the output (or gives zeros)
        std::copy(h_new.begin() + r, h_new.begin() + r + units, h.begin() + r);
        std::copy(c_new + r, c_new + r + units, c.begin() + r);
        std::copy(h_new.begin() + r, h_new.begin() + r + units, y.begin() + r);
      } else if (zero_output_for_mask) {
        std::fill(y.begin() + r, y.begin() + r + units, 0.f);
      }
      float* row = o + (b * steps + s) * 3 * units;
      std::copy(y.begin() + r, y.begin() + r + units, row);
      std::copy(h.begin() + r, h.begin() + r + units, row + units);
      std::copy(c.begin() + r, c.begin() + r + units, row + 2 * units);
    }
  }
  if (recording)
    rec->record("lstm_sequence", {xp, h0, c0, u}, out, [=](const Tensor& dout) {
      const LstmTrace& T = *tr;
      const float* d = dout.data<float>();
      Tensor dxp = Tensor::zeros(xp.shape()), du = Tensor::empty(u.shape());
      Tensor dh0 = Tensor::empty(h0.shape()), dc0 = Tensor::empty(c0.shape());
      float *gh = dh0.data<float>(), *gc = dc0.data<float>();  // d/d h_s, c_s from later steps
      std::fill(gh, gh + n, 0.f);
      std::fill(gc, gc + n, 0.f);
      std::vector<float> gy(n, 0.f), dh(n), dc(n), tmp(n), dgate(4 * n), dz_all(steps * 4 * n), dh_prev(n);
      for (int64_t s = steps - 1; s >= 0; --s) {
        const int64_t t = go_backwards ? steps - 1 - s : s;  // (walk's pointers are not kept past the forward)
        const char* keep = T.keep.data() + s * batch;
        for (int64_t b = 0; b < batch; ++b) {
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
        const float* g = T.gates.data() + s * 4 * n;
        const float *gi = g, *gf = g + n, *gg = g + 2 * n, *go = g + 3 * n;
        const float* ac = T.act_c.data() + s * n;
        float *di = dgate.data(), *df = di + n, *dg = di + 2 * n, *dgo = di + 3 * n;
        for (int64_t i = 0; i < n; ++i) dgo[i] = dh[i] * ac[i], tmp[i] = dh[i] * go[i];  // h' = o * act(c')
        kernels::unary_grad(act, T.c_new.data() + s * n, ac, tmp.data(), tmp.data(), n, acts.act_alpha);
        const float* cp = T.c_prev.data() + s * n;
        for (int64_t i = 0; i < n; ++i) {  // c' = f * c + i * g
          const float dct = tmp[i] + dc[i];
          di[i] = dct * gg[i], dg[i] = dct * gi[i], df[i] = dct * cp[i], dc[i] = dct * gf[i];
        }
        float* dz = dz_all.data() + s * 4 * n;  // (batch, 4 units), rows of (i, f, c, o)
        for (int k = 0; k < 4; ++k) {
          const UnaryOp op = k == 2 ? act : ract;
          const float alpha = k == 2 ? acts.act_alpha : acts.ract_alpha;
          kernels::unary_grad(op, T.pre.data() + (s * 4 + k) * n, g + k * n, dgate.data() + k * n, tmp.data(), n, alpha);
          for (int64_t b = 0; b < batch; ++b) {
            std::copy(tmp.data() + b * units, tmp.data() + (b + 1) * units, dz + (b * 4 + k) * units);
            std::copy(tmp.data() + b * units, tmp.data() + (b + 1) * units,
                      dxp.data<float>() + (b * steps + t) * width + k * units);
          }
        }
        kernels::matmul_transposed(false, true, dz, u.data<float>(), dh_prev.data(), batch, units, width);
        for (int64_t b = 0; b < batch; ++b) {
          if (!keep[b]) continue;  // its gradients stay the carried ones
          for (int64_t j = 0; j < units; ++j) {
            const int64_t i = b * units + j;
            gh[i] = rm.defined() ? dh_prev[i] * rm.data<float>()[i] : dh_prev[i];
            gc[i] = dc[i];
          }
        }
      }
      // Every step's hd (steps * batch, units) against its dz (steps * batch, 4 units) in one product.
      kernels::matmul_transposed(true, false, T.hd.data(), dz_all.data(), du.data<float>(), units, width,
                                 steps * batch);
      return Grads{dxp, dh0, dc0, du};
    });
  return out;
}

}  // namespace kerascpp::ops
