// Ops along one axis: softmax, log_softmax, l2_normalize, sum. Each views x as (outer, axis, inner).
#include "kernels/reduce.h"

#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

using AxisKernel = void (*)(const float*, float*, int64_t, int64_t, int64_t);

Tensor along_axis(const char* op, AxisKernel kernel, const Tensor& x, int axis) {
  detail::check_float32(op, x, "x");
  const int ax = detail::normalize_axis_for(op, axis, x.rank());
  const detail::AxisSplit s = detail::split_axis(x.shape(), ax);
  Tensor y = Tensor::empty(x.shape());
  kernel(x.data<float>(), y.data<float>(), s.outer, s.axis, s.inner);
  return y;
}

}  // namespace

Tensor softmax(const Tensor& x, int axis) {
  Tensor y = along_axis("softmax", kernels::softmax, x, axis);
  if (Recorder* r = tape_for({&x}))
    r->record("softmax", {x}, y, [y, axis](const Tensor& dy) {
      using namespace detail;  // dx = y * (dy - sum(dy * y))
      return Grads{mul(y, sub(dy, sum(mul(dy, y), axis, true)))};
    });
  return y;
}

Tensor log_softmax(const Tensor& x, int axis) {
  Tensor y = along_axis("log_softmax", kernels::log_softmax, x, axis);
  if (Recorder* r = tape_for({&x}))
    r->record("log_softmax", {x}, y, [y, axis](const Tensor& dy) {
      using namespace detail;  // dx = dy - softmax(x) * sum(dy)
      return Grads{sub(dy, mul(unary(UnaryOp::exp, y), sum(dy, axis, true)))};
    });
  return y;
}

Tensor l2_normalize(const Tensor& x, int axis, float epsilon) {
  detail::check_float32("l2_normalize", x, "x");
  KCPP_CHECK(epsilon >= 0, ValueError, "l2_normalize: epsilon must be >= 0. Received: epsilon=", epsilon);
  const int ax = detail::normalize_axis_for("l2_normalize", axis, x.rank());
  const detail::AxisSplit s = detail::split_axis(x.shape(), ax);
  Tensor y = Tensor::empty(x.shape());
  kernels::l2_normalize(x.data<float>(), y.data<float>(), s.outer, s.axis, s.inner, epsilon);
  if (Recorder* r = tape_for({&x}))
    r->record("l2_normalize", {x}, y, [x, y, ax, epsilon](const Tensor& dy) {
      return Grads{detail::l2_normalize_grad(x, y, dy, {ax}, epsilon)};
    });
  return y;
}

// x: (..., d_axis, ...) -> without that dim, or with it as 1 when keepdims.
Tensor sum(const Tensor& x, int axis, bool keepdims) {
  detail::check_float32("sum", x, "x");
  const int ax = detail::normalize_axis_for("sum", axis, x.rank());
  const detail::AxisSplit s = detail::split_axis(x.shape(), ax);
  Shape out = x.shape();
  if (keepdims)
    out[ax] = 1;
  else
    out.erase(out.begin() + ax);
  Tensor y = Tensor::empty(out);
  kernels::sum(x.data<float>(), y.data<float>(), s.outer, s.axis, s.inner);
  if (Recorder* r = tape_for({&x}))
    r->record("sum", {x}, y, [x, ax](const Tensor& dy) {
      Shape kept = x.shape();
      kept[ax] = 1;
      return Grads{detail::broadcast_to(dy.reshape(kept), x.shape())};
    });
  return y;
}

}  // namespace kerascpp::ops
