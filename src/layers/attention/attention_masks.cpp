#include "layers/attention/attention_masks.h"

#include <cstdlib>

#include "ops/ops.h"

namespace kerascpp::layers {
namespace {
Tensor band(int64_t tq, int64_t ts, bool (*keep)(int64_t i, int64_t j, int64_t w), int64_t w) {
  Tensor m = Tensor::empty({1, tq, ts});
  float* p = m.data<float>();
  for (int64_t i = 0; i < tq; ++i)
    for (int64_t j = 0; j < ts; ++j) p[i * ts + j] = keep(i, j, w) ? 1.f : 0.f;
  return m;
}
}  // namespace

Tensor causal_mask(int64_t tq, int64_t ts) {
  return band(tq, ts, [](int64_t i, int64_t j, int64_t) { return j <= i; }, 0);
}

Tensor sliding_window_mask(int64_t tq, int64_t ts, int64_t window) {
  return band(tq, ts, [](int64_t i, int64_t j, int64_t w) { return std::llabs(i - j) < w; }, window);
}

Tensor and_masks(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return ops::binary(ops::BinaryOp::multiply, a, b);
}

Tensor masked_softmax(const Tensor& x, const Tensor& mask, int axes, MaskedRows rows) {
  Tensor s = x;
  if (mask.defined()) s = ops::binary(ops::BinaryOp::add, s, ops::scale_shift(mask, 1e9f, -1e9f));
  Tensor y;
  if (axes == 1) {
    y = ops::softmax(s, -1);
  } else {
    Shape flat(s.shape().begin(), s.shape().end() - axes);
    flat.push_back(-1);
    y = ops::softmax(s.reshape(flat), -1).reshape(s.shape());
  }
  if (mask.defined() && rows == MaskedRows::zero) y = ops::binary(ops::BinaryOp::multiply, y, mask);
  return y;
}

}  // namespace kerascpp::layers
