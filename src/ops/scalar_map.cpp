// Elementwise ops given as scalar functions, for the math that op nodes reach and no layer does
// (sin, floor, power, comparisons, ...): numpy broadcasting, gradients from the scalar derivatives.
// Plain loops: these ops are rare in models and never on a hot path of a built-in layer.
#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {

Tensor map_unary(const char* op, const Tensor& x, ScalarFn f, ScalarGrad df) {
  detail::check_float32(op, x, "x");
  Tensor y = Tensor::empty(x.shape());
  const float* xs = x.data<float>();
  float* ys = y.data<float>();
  for (int64_t i = 0; i < x.size(); ++i) ys[i] = f(xs[i]);
  if (df)
    if (Recorder* r = tape_for({&x}))
      r->record(op, {x}, y, [x, y, df](const Tensor& dy) {
        Tensor dx = Tensor::empty(x.shape());
        for (int64_t i = 0; i < x.size(); ++i)
          dx.data<float>()[i] = dy.data<float>()[i] * df(x.data<float>()[i], y.data<float>()[i]);
        return Grads{dx};
      });
  return y;
}

Tensor map_binary(const char* op, const Tensor& a, const Tensor& b, ScalarFn2 f, ScalarGrad2 da, ScalarGrad2 db) {
  detail::check_float32(op, a, "x1");
  detail::check_float32(op, b, "x2");
  const Shape shape = detail::broadcast_shape_for(op, a.shape(), b.shape());
  const Tensor A = detail::broadcast_to(a, shape), B = detail::broadcast_to(b, shape);
  Tensor y = Tensor::empty(shape);
  for (int64_t i = 0; i < y.size(); ++i) y.data<float>()[i] = f(A.data<float>()[i], B.data<float>()[i]);
  if (da && db)
    if (Recorder* r = tape_for({&a, &b}))
      r->record(op, {a, b}, y, [a, b, A, B, y, da, db](const Tensor& dy) {
        Tensor ga = Tensor::empty(y.shape()), gb = Tensor::empty(y.shape());
        for (int64_t i = 0; i < y.size(); ++i) {
          const float av = A.data<float>()[i], bv = B.data<float>()[i], yv = y.data<float>()[i];
          ga.data<float>()[i] = dy.data<float>()[i] * da(av, bv, yv);
          gb.data<float>()[i] = dy.data<float>()[i] * db(av, bv, yv);
        }
        return Grads{detail::sum_to(ga, a.shape()), detail::sum_to(gb, b.shape())};
      });
  return y;
}

}  // namespace kerascpp::ops
