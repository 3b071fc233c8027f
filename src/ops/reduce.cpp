// Ops along one axis: softmax, log_softmax, l2_normalize, sum. Each views x as (outer, axis, inner).
#include "kernels/reduce.h"

#include "ops/checks.h"
#include "ops/ops.h"

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

Tensor softmax(const Tensor& x, int axis) { return along_axis("softmax", kernels::softmax, x, axis); }

Tensor log_softmax(const Tensor& x, int axis) {
  return along_axis("log_softmax", kernels::log_softmax, x, axis);
}

Tensor l2_normalize(const Tensor& x, int axis, float epsilon) {
  detail::check_float32("l2_normalize", x, "x");
  KCPP_CHECK(epsilon >= 0, ValueError, "l2_normalize: epsilon must be >= 0. Received: epsilon=", epsilon);
  const int ax = detail::normalize_axis_for("l2_normalize", axis, x.rank());
  const detail::AxisSplit s = detail::split_axis(x.shape(), ax);
  Tensor y = Tensor::empty(x.shape());
  kernels::l2_normalize(x.data<float>(), y.data<float>(), s.outer, s.axis, s.inner, epsilon);
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
  return y;
}

}  // namespace kerascpp::ops
