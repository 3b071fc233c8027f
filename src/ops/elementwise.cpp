// Broadcasting binary ops, prelu and scale_shift: shape inference, then kernels::binary.
#include "kernels/elementwise.h"

#include "ops/checks.h"
#include "ops/ops.h"

namespace kerascpp::ops {
namespace {

const char* binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::add:
      return "add";
    case BinaryOp::subtract:
      return "subtract";
    case BinaryOp::multiply:
      return "multiply";
    case BinaryOp::divide:
      return "divide";
    case BinaryOp::maximum:
      return "maximum";
    case BinaryOp::minimum:
      return "minimum";
  }
  return "binary";
}

kernels::Binary to_kernel(BinaryOp op) {
  switch (op) {
    case BinaryOp::add:
      return kernels::Binary::add;
    case BinaryOp::subtract:
      return kernels::Binary::subtract;
    case BinaryOp::multiply:
      return kernels::Binary::multiply;
    case BinaryOp::divide:
      return kernels::Binary::divide;
    case BinaryOp::maximum:
      return kernels::Binary::maximum;
    case BinaryOp::minimum:
      return kernels::Binary::minimum;
  }
  KCPP_THROW(ValueError, "Unknown BinaryOp ", static_cast<int>(op));
}

Tensor run_binary(const char* name, kernels::Binary op, const Tensor& a, const Tensor& b) {
  detail::check_float32(name, a, "a");
  detail::check_float32(name, b, "b");
  detail::BroadcastPlan plan = detail::plan_broadcast(name, a.shape(), b.shape());
  Tensor y = Tensor::empty(plan.out_shape);
  kernels::binary(op, a.data<float>(), plan.a_strides.data(), b.data<float>(), plan.b_strides.data(),
                  y.data<float>(), plan.shape.data(), static_cast<int>(plan.shape.size()));
  return y;
}

}  // namespace

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  return run_binary(binary_name(op), to_kernel(op), a, b);
}

// keras.layers.PReLU: alpha has the input's shape without the batch axis, with 1s on shared_axes;
// it must broadcast to x without changing x's shape.
Tensor prelu(const Tensor& x, const Tensor& alpha) {
  detail::check_float32("prelu", x, "x");
  detail::check_float32("prelu", alpha, "alpha");
  KCPP_CHECK(detail::broadcast_shape_for("prelu", x.shape(), alpha.shape()) == x.shape(), ValueError,
             "prelu: alpha must broadcast to the shape of x. Received: x.shape=", shape_str(x.shape()),
             ", alpha.shape=", shape_str(alpha.shape()));
  return run_binary("prelu", kernels::Binary::prelu, x, alpha);
}

// keras.layers.Rescaling with scalar scale and offset.
Tensor scale_shift(const Tensor& x, float scale, float offset) {
  detail::check_float32("scale_shift", x, "x");
  Tensor y = Tensor::empty(x.shape());
  kernels::scale_shift(x.data<float>(), y.data<float>(), x.size(), scale, offset);
  return y;
}

}  // namespace kerascpp::ops
