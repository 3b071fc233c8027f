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
               const RnnActivations& a, float* z, float* gates, float* pre, float* act_c, float* h_out,
               float* c_out) {
  const int64_t n = batch * units;
  matmul(hd, u, z, batch, 4 * units, units);
  for (int k = 0; k < 4; ++k)  // z + xp, rows of (i, f, c, o) into (4, batch, units)
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t from = (b * 4 + k) * units, to = k * n + b * units;
      for (int64_t j = 0; j < units; ++j) gates[to + j] = z[from + j] + xp[from + j];
    }
  if (pre != nullptr) std::copy(gates, gates + 4 * n, pre);
  lstm_cell(gates, c, n, a, act_c, h_out, c_out);
}

void gru_step(const float* xp, const float* h, const float* hd, const float* u, const float* rb, int64_t batch,
              int64_t units, const RnnActivations& a, float* rec, float* gates, float* pre, float* h_out) {
  const int64_t n = batch * units, width = 3 * units;
  matmul(hd, u, rec, batch, width, units);
  if (rb != nullptr)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < width; ++j) rec[b * width + j] += rb[j];
  float *z = gates, *r = gates + n, *hh = gates + 2 * n;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < units; ++j) {
      const int64_t i = b * units + j, row = b * width + j;
      z[i] = xp[row] + rec[row];
      r[i] = xp[row + units] + rec[row + units];
    }
  if (pre != nullptr) std::copy(gates, gates + 2 * n, pre);
  activate(a.ract, a.ract_alpha, gates, 2 * n);  // z and r at once
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < units; ++j) {
      const int64_t i = b * units + j, row = b * width + 2 * units + j;
      hh[i] = xp[row] + r[i] * rec[row];
    }
  if (pre != nullptr) std::copy(hh, hh + n, pre + 2 * n);
  activate(a.act, a.act_alpha, hh, n);
  for (int64_t i = 0; i < n; ++i) h_out[i] = z[i] * h[i] + (1.f - z[i]) * hh[i];
}

}  // namespace kerascpp::kernels
