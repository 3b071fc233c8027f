// matmul, batch_matmul, bias_add: shape inference and validation, then kernels::matmul / binary.
#include <climits>

#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

void check_incompatible(const char* op, bool ok, const Tensor& a, const Tensor& b) {
  KCPP_CHECK(ok, ValueError, op, ": Incompatible shapes: a=", shape_str(a.shape()),
             " b=", shape_str(b.shape()));
}

// cblas takes int sizes; rows are split by the kernel, the other two must fit.
void check_blas_sizes(const char* op, int64_t n, int64_t k) {
  KCPP_CHECK(n <= INT_MAX && k <= INT_MAX, NotImplementedError, op,
             ": dimensions above 2147483647 are not supported. Received: n=", n, ", k=", k);
}

}  // namespace

// a: (..., m, k) or (k,); b: (k, n) or (k,). numpy rules for rank 1: a (k,) is a row and its dim is
// dropped from the result, b (k,) is a column and its dim is dropped.
Tensor matmul(const Tensor& a, const Tensor& b) {
  detail::check_float32("matmul", a, "a");
  detail::check_float32("matmul", b, "b");
  check_incompatible("matmul", a.rank() >= 1 && (b.rank() == 1 || b.rank() == 2), a, b);
  const int64_t k = a.dim(-1);
  const int64_t n = b.rank() == 2 ? b.dim(1) : 1;
  check_incompatible("matmul", b.dim(0) == k, a, b);
  check_blas_sizes("matmul", n, k);
  Shape out(a.shape().begin(), a.shape().end() - 1);  // (..., m)
  if (b.rank() == 2) out.push_back(n);
  Tensor y = Tensor::empty(out);
  const int64_t m = shape_size(Shape(a.shape().begin(), a.shape().end() - 1));
  kernels::matmul(a.data<float>(), b.data<float>(), y.data<float>(), m, n, k);
  if (Recorder* r = tape_for({&a, &b}))
    r->record("matmul", {a, b}, y, [a, b, m, n, k](const Tensor& dy) {
      // a viewed as (m, k), b as (k, n), dy as (m, n): da = dy @ b^T, db = a^T @ dy.
      Tensor da = Tensor::empty(a.shape()), db = Tensor::empty(b.shape());
      kernels::matmul_transposed(false, true, dy.data<float>(), b.data<float>(), da.data<float>(), m, k, n);
      kernels::matmul_transposed(true, false, a.data<float>(), dy.data<float>(), db.data<float>(), k, n, m);
      return Grads{da, db};
    });
  return y;
}

// a: (..., m, k), b: (..., k, n) -> (broadcast(...), m, n), as numpy.matmul / keras.ops.matmul for
// rank >= 2; the leading (batch) dims broadcast.
Tensor batch_matmul(const Tensor& a, const Tensor& b) {
  detail::check_float32("batch_matmul", a, "a");
  detail::check_float32("batch_matmul", b, "b");
  check_incompatible("batch_matmul", a.rank() >= 2 && b.rank() >= 2 && a.dim(-1) == b.dim(-2), a, b);
  const int64_t m = a.dim(-2), k = a.dim(-1), n = b.dim(-1);
  check_blas_sizes("batch_matmul", n, k);
  Shape a_batch(a.shape().begin(), a.shape().end() - 2), b_batch(b.shape().begin(), b.shape().end() - 2);
  detail::BroadcastPlan plan;
  try {
    plan = detail::plan_broadcast("batch_matmul", a_batch, b_batch);
  } catch (const ValueError&) {
    check_incompatible("batch_matmul", false, a, b);
  }
  Shape out = plan.out_shape;
  out.push_back(m);
  out.push_back(n);
  Tensor y = Tensor::empty(out);
  const float* ap = a.data<float>();
  const float* bp = b.data<float>();
  float* yp = y.data<float>();
  if (Recorder* r = tape_for({&a, &b}))
    r->record("batch_matmul", {a, b}, y, [a, b](const Tensor& dy) {
      // da = dy @ b^T and db = a^T @ dy per batch entry, summed back over broadcast batch dims.
      const int rank_b = b.rank(), rank_a = a.rank();
      std::vector<int> pa(rank_a), pb(rank_b);
      for (int d = 0; d < rank_a; ++d) pa[d] = d;
      for (int d = 0; d < rank_b; ++d) pb[d] = d;
      std::swap(pa[rank_a - 1], pa[rank_a - 2]);
      std::swap(pb[rank_b - 1], pb[rank_b - 2]);
      Tensor da = batch_matmul(dy, transpose(b, pb)), db = batch_matmul(transpose(a, pa), dy);
      return Grads{detail::sum_to(da, a.shape()), detail::sum_to(db, b.shape())};
    });
  if (shape_size(b_batch) == 1) {  // one b for every batch: a single (batch * m, k) @ (k, n)
    kernels::matmul(ap, bp, yp, shape_size(plan.out_shape) * m, n, k);
    return y;
  }
  // Walk the merged batch dims; plan strides count batch entries, so scale by matrix sizes.
  const int64_t batches = shape_size(plan.out_shape);
  const int rank = static_cast<int>(plan.shape.size());
  for (int64_t i = 0; i < batches; ++i) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t idx = rest % plan.shape[d];
      rest /= plan.shape[d];
      ia += idx * plan.a_strides[d];
      ib += idx * plan.b_strides[d];
    }
    kernels::matmul(ap + ia * m * k, bp + ib * k * n, yp + i * m * n, m, n, k);
  }
  return y;
}

// x: (..., c), bias: (c,)
Tensor bias_add(const Tensor& x, const Tensor& bias) {
  detail::check_float32("bias_add", x, "x");
  detail::check_float32("bias_add", bias, "bias");
  KCPP_CHECK(x.rank() >= 1 && bias.rank() == 1 && bias.dim(0) == x.dim(-1), ValueError,
             "bias_add: bias must have shape (c,) where c is the last dimension of x. Received: x.shape=",
             shape_str(x.shape()), ", bias.shape=", shape_str(bias.shape()));
  Tensor y = Tensor::empty(x.shape());
  const int64_t c = bias.dim(0), rows = c > 0 ? x.size() / c : 0;
  const int64_t shape[] = {rows, c}, xs[] = {c, 1}, bs[] = {0, 1};
  kernels::binary(kernels::Binary::add, x.data<float>(), xs, bias.data<float>(), bs, y.data<float>(), shape,
                  2);
  if (Recorder* r = tape_for({&x, &bias}))
    r->record("bias_add", {x, bias}, y, [rows, c](const Tensor& dy) {
      return Grads{dy, sum(dy.reshape({rows, c}), 0)};
    });
  return y;
}

}  // namespace kerascpp::ops
