#include "kernels/recurrent.h"

#include <algorithm>

#include "kernels/elementwise.h"
#include "kernels/matmul.h"

namespace kerascpp::kernels {
namespace {

void activate(Unary op, float alpha, float* x, int64_t n) {
  if (op != Unary::linear) unary(op, x, x, n, alpha);
}

}  // namespace

void lstm_step(const float* xp, const float* hd, const float* c, const float* u, int64_t batch, int64_t units,
               const LstmActivations& a, float* z, float* gates, float* pre, float* act_c, float* h_out,
               float* c_out) {
  const int64_t n = batch * units;
  matmul(hd, u, z, batch, 4 * units, units);
  for (int64_t i = 0; i < 4 * n; ++i) z[i] += xp[i];
  for (int k = 0; k < 4; ++k)  // rows of (i, f, c, o) into (4, batch, units)
    for (int64_t b = 0; b < batch; ++b)
      std::copy(z + (b * 4 + k) * units, z + (b * 4 + k + 1) * units, gates + k * n + b * units);
  if (pre != nullptr) std::copy(gates, gates + 4 * n, pre);
  activate(a.ract, a.ract_alpha, gates, 2 * n);  // i and f at once
  activate(a.act, a.act_alpha, gates + 2 * n, n);
  activate(a.ract, a.ract_alpha, gates + 3 * n, n);
  const float *gi = gates, *gf = gates + n, *gc = gates + 2 * n, *go = gates + 3 * n;
  for (int64_t i = 0; i < n; ++i) c_out[i] = gf[i] * c[i] + gi[i] * gc[i];
  std::copy(c_out, c_out + n, act_c);
  activate(a.act, a.act_alpha, act_c, n);
  for (int64_t i = 0; i < n; ++i) h_out[i] = go[i] * act_c[i];
}

}  // namespace kerascpp::kernels
