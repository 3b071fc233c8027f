#include "ops/grad_util.h"

#include <algorithm>
#include <cmath>

#include "ops/ops.h"

namespace kerascpp::ops::detail {

Tensor filled(const Shape& shape, float v) {
  Tensor t = Tensor::empty(shape);
  std::fill(t.data<float>(), t.data<float>() + t.size(), v);
  return t;
}

Tensor scalar(float v) { return filled({}, v); }

Tensor broadcast_to(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  // t + 0, with zeros only along the axes t lacks: binary broadcasts the sum to `shape` as a zeros
  // tensor of that shape did, with the same bits, without writing and reading one.
  const int lead = static_cast<int>(shape.size()) - t.rank();
  if (lead < 0) return binary(BinaryOp::add, t, Tensor::zeros(shape));  // binary names the mismatch
  Shape zeros(shape.size(), 1);
  for (int d = 0; d < static_cast<int>(shape.size()); ++d)
    if (d < lead || t.dim(d - lead) != shape[d]) zeros[d] = shape[d];
  return binary(BinaryOp::add, t, Tensor::zeros(zeros));
}

Tensor sum_axes(const Tensor& x, const std::vector<int>& axes) {
  if (axes.empty()) return x;
  int64_t count = 1;
  for (int a : axes) count *= x.dim(a);
  return scale_shift(reduce_mean(x, axes, /*keepdims=*/true), static_cast<float>(count), 0.f);
}

Tensor sum_to(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const int lead = g.rank() - static_cast<int>(shape.size());
  std::vector<int> axes;
  for (int d = 0; d < g.rank(); ++d)
    if (d < lead || (shape[d - lead] == 1 && g.dim(d) != 1)) axes.push_back(d);
  Tensor s = sum_axes(g, axes);
  return s.reshape(shape);
}

Tensor l2_normalize_grad(const Tensor& x, const Tensor& y, const Tensor& dy, const std::vector<int>& axes,
                         float epsilon) {
  Tensor ss = sum_axes(unary(UnaryOp::square, x), axes);  // kept dims
  Tensor active = Tensor::empty(ss.shape()), norm = Tensor::empty(ss.shape());
  for (int64_t i = 0; i < ss.size(); ++i) {
    const float v = ss.data<float>()[i];
    active.data<float>()[i] = v > epsilon ? 1.f : 0.f;
    norm.data<float>()[i] = std::sqrt(std::max(v, epsilon));
  }
  Tensor proj = mul(sum_axes(mul(dy, y), axes), active);
  return div(sub(dy, mul(y, proj)), norm);
}

Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::multiply, a, b); }
Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::subtract, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::divide, a, b); }

}  // namespace kerascpp::ops::detail
