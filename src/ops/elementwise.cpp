// Broadcasting binary ops, prelu and scale_shift: shape inference, then kernels::binary.
#include "kernels/elementwise.h"

#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

Tensor run_binary(const char* name, kernels::Binary op, const Tensor& a, const Tensor& b) {
  detail::check_float32(name, a, "a");
  detail::check_float32(name, b, "b");
  detail::BroadcastPlan plan = detail::plan_broadcast(name, a.shape(), b.shape());
  Tensor y = Tensor::empty(plan.out_shape);
  kernels::binary(op, a.data<float>(), plan.a_strides.data(), b.data<float>(), plan.b_strides.data(),
                  y.data<float>(), plan.shape.data(), static_cast<int>(plan.shape.size()));
  return y;
}

// Where maximum / minimum send the gradient: to a where a wins or ties (as TensorFlow), else to b.
std::pair<Tensor, Tensor> select_grads(bool is_max, const Tensor& a, const Tensor& b, const Tensor& dy) {
  const Tensor ab = detail::broadcast_to(a, dy.shape()), bb = detail::broadcast_to(b, dy.shape());
  Tensor da = Tensor::empty(dy.shape()), db = Tensor::empty(dy.shape());
  const float *pa = ab.data<float>(), *pb = bb.data<float>(), *g = dy.data<float>();
  float *oa = da.data<float>(), *ob = db.data<float>();
  for (int64_t i = 0; i < dy.size(); ++i) {
    const bool to_a = is_max ? pa[i] >= pb[i] : pa[i] <= pb[i];
    oa[i] = to_a ? g[i] : 0.f;
    ob[i] = to_a ? 0.f : g[i];
  }
  return {detail::sum_to(da, a.shape()), detail::sum_to(db, b.shape())};
}

ops::Grads binary_grads(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& y, const Tensor& dy) {
  using namespace detail;
  switch (op) {
    case BinaryOp::add:
      return {sum_to(dy, a.shape()), sum_to(dy, b.shape())};
    case BinaryOp::subtract:
      return {sum_to(dy, a.shape()), sum_to(scale_shift(dy, -1.f, 0.f), b.shape())};
    case BinaryOp::multiply:
      return {sum_to(mul(dy, b), a.shape()), sum_to(mul(dy, a), b.shape())};
    case BinaryOp::divide:  // d(a/b)/db = -y / b
      return {sum_to(div(dy, b), a.shape()), sum_to(scale_shift(div(mul(dy, y), b), -1.f, 0.f), b.shape())};
    case BinaryOp::maximum:
    case BinaryOp::minimum: {
      auto [da, db] = select_grads(op == BinaryOp::maximum, a, b, dy);
      return {da, db};
    }
    case BinaryOp::prelu: {  // da = dy where a > 0, dy * b elsewhere; db = dy * min(a, 0)
      const Tensor bb = broadcast_to(b, dy.shape()), ab = broadcast_to(a, dy.shape());
      Tensor da = Tensor::empty(dy.shape()), db = Tensor::empty(dy.shape());
      const float *px = ab.data<float>(), *pa = bb.data<float>(), *g = dy.data<float>();
      for (int64_t i = 0; i < dy.size(); ++i) {
        da.data<float>()[i] = px[i] > 0.f ? g[i] : g[i] * pa[i];
        db.data<float>()[i] = px[i] > 0.f ? 0.f : g[i] * px[i];
      }
      return {sum_to(da, a.shape()), sum_to(db, b.shape())};
    }
  }
  return {Tensor(), Tensor()};
}

}  // namespace

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = binary_name(op).data();  // a string literal from binary_list.inc
  Tensor y = run_binary(name, op, a, b);
  if (Recorder* r = tape_for({&a, &b}))
    r->record(name, {a, b}, y, [op, a, b, y](const Tensor& dy) { return binary_grads(op, a, b, y, dy); });
  return y;
}

// keras.layers.PReLU: alpha has the input's shape without the batch axis, with 1s on shared_axes;
// it must broadcast to x without changing x's shape.
Tensor prelu(const Tensor& x, const Tensor& alpha) {
  detail::check_float32("prelu", x, "x");
  detail::check_float32("prelu", alpha, "alpha");
  KCPP_CHECK(detail::broadcast_shape_for("prelu", x.shape(), alpha.shape()) == x.shape(), ValueError,
             "prelu: alpha must broadcast to the shape of x. Received: x.shape=", shape_str(x.shape()),
             ", alpha.shape=", shape_str(alpha.shape()));
  return binary(BinaryOp::prelu, x, alpha);
}

// keras.layers.Rescaling with scalar scale and offset.
Tensor scale_shift(const Tensor& x, float scale, float offset) {
  detail::check_float32("scale_shift", x, "x");
  Tensor y = Tensor::empty(x.shape());
  kernels::scale_shift(x.data<float>(), y.data<float>(), x.size(), scale, offset);
  if (Recorder* r = tape_for({&x}))
    r->record("scale_shift", {x}, y, [scale](const Tensor& dy) { return Grads{scale_shift(dy, scale, 0.f)}; });
  return y;
}

}  // namespace kerascpp::ops
