// lstm_step: one LSTM step as one op, so that training through time records one op per step instead of
// fifteen. The forward is kernels::lstm_step, which the inference loop runs too; the backward is the
// LSTM's, written out.
#include <algorithm>

#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/recurrent.h"
#include "ops/checks.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

void add_into(float* y, const float* a, const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}
void mul_into(float* y, const float* a, const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}
void grad(UnaryOp op, const float* x, const float* y, const float* dy, float* dx, int64_t n) {
  kernels::unary_grad(op, x, y, dy, dx, n, default_alpha(op));
}

}  // namespace

Tensor lstm_step(const Tensor& xp, const Tensor& h, const Tensor& c, const Tensor& u, const Tensor& rm, UnaryOp act,
                 UnaryOp ract) {
  for (const Tensor* t : {&xp, &h, &c, &u}) detail::check_float32("lstm_step", *t, "input");
  const int64_t batch = h.dim(0), units = h.dim(1), n = batch * units;
  KCPP_CHECK(c.shape() == h.shape() && u.shape() == Shape({units, 4 * units}) && xp.shape() == Shape({batch, 4 * units}) &&
                 (!rm.defined() || rm.shape() == h.shape()),
             ValueError, "lstm_step: shapes do not fit: xp ", shape_str(xp.shape()), ", h ", shape_str(h.shape()), ", c ",
             shape_str(c.shape()), ", recurrent kernel ", shape_str(u.shape()));
  Tensor hd = h;  // h through recurrent dropout
  if (rm.defined()) {
    hd = Tensor::empty(h.shape());
    mul_into(hd.data<float>(), h.data<float>(), rm.data<float>(), n);
  }
  // Per gate (i, f, c, o), contiguous (batch, units): its input and its activation.
  Tensor pre = Tensor::empty({4, batch, units}), gate = Tensor::empty({4, batch, units});
  Tensor c_new = Tensor::empty(h.shape()), ac = Tensor::empty(h.shape()), h_new = Tensor::empty(h.shape());
  std::vector<float> z(4 * n);
  kernels::lstm_step(xp.data<float>(), hd.data<float>(), c.data<float>(), u.data<float>(), batch, units,
                     {act, default_alpha(act), ract, default_alpha(ract)}, z.data(), gate.data<float>(),
                     pre.data<float>(), ac.data<float>(), h_new.data<float>(), c_new.data<float>());
  Tensor out = Tensor::empty({batch, 2 * units});  // [h' | c'] per row
  for (int64_t b = 0; b < batch; ++b) {
    float* row = out.data<float>() + b * 2 * units;
    std::copy(h_new.data<float>() + b * units, h_new.data<float>() + (b + 1) * units, row);
    std::copy(c_new.data<float>() + b * units, c_new.data<float>() + (b + 1) * units, row + units);
  }
  if (Recorder* r = tape_for({&xp, &h, &c, &u}))
    r->record("lstm_step", {xp, h, c, u}, out, [=](const Tensor& dy) {
      std::vector<float> dh(n), dc(n), t(n), dgate(4 * n);
      for (int64_t b = 0; b < batch; ++b) {
        std::copy(dy.data<float>() + b * 2 * units, dy.data<float>() + b * 2 * units + units, dh.data() + b * units);
        std::copy(dy.data<float>() + b * 2 * units + units, dy.data<float>() + (b + 1) * 2 * units, dc.data() + b * units);
      }
      const float *gi = gate.data<float>(), *gf = gi + n, *gg = gi + 2 * n, *go = gi + 3 * n;
      float *di = dgate.data(), *df = di + n, *dg = di + 2 * n, *dgo = di + 3 * n;
      mul_into(dgo, dh.data(), ac.data<float>(), n);               // d o = dh * act(c')
      mul_into(t.data(), dh.data(), go, n);                        // d act(c') = dh * o
      std::vector<float> dct(n);
      grad(act, c_new.data<float>(), ac.data<float>(), t.data(), dct.data(), n);
      add_into(dct.data(), dct.data(), dc.data(), n);              // total dc'
      mul_into(di, dct.data(), gg, n);
      mul_into(dg, dct.data(), gi, n);
      mul_into(df, dct.data(), c.data<float>(), n);
      Tensor dc_prev = Tensor::empty(c.shape());
      mul_into(dc_prev.data<float>(), dct.data(), gf, n);
      Tensor dxp = Tensor::empty(xp.shape());  // dz, rows of (i, f, g, o)
      for (int k = 0; k < 4; ++k) {
        grad(k == 2 ? act : ract, pre.data<float>() + k * n, gate.data<float>() + k * n, dgate.data() + k * n,
             t.data(), n);
        for (int64_t b = 0; b < batch; ++b)
          std::copy(t.data() + b * units, t.data() + (b + 1) * units, dxp.data<float>() + (b * 4 + k) * units);
      }
      Tensor dh_prev = Tensor::empty(h.shape()), du = Tensor::empty(u.shape());
      kernels::matmul_transposed(false, true, dxp.data<float>(), u.data<float>(), dh_prev.data<float>(), batch, units,
                                 4 * units);
      if (rm.defined()) mul_into(dh_prev.data<float>(), dh_prev.data<float>(), rm.data<float>(), n);
      kernels::matmul_transposed(true, false, hd.data<float>(), dxp.data<float>(), du.data<float>(), units, 4 * units,
                                 batch);
      return Grads{dxp, dh_prev, dc_prev, du};
    });
  return out;
}

}  // namespace kerascpp::ops
