// not_equal and any: Keras 3's mask ops (Embedding(mask_zero) and Masking record them in graphs).
// Booleans are float32 0 / 1 here, which is how kerascpp carries masks; no gradient (Keras's are bool).
#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

Tensor as_float(const Tensor& t) { return t.dtype() == DType::float32 ? t : t.astype(DType::float32); }

}  // namespace

Tensor not_equal(const Tensor& a, const Tensor& b) {
  const Tensor fa = as_float(a), fb = as_float(b);
  const Shape shape = detail::broadcast_shape_for("not_equal", fa.shape(), fb.shape());
  Tensor out = Tensor::empty(shape);
  const int64_t n = out.size();
  float* o = out.data<float>();
  // x != a number (masks: Masking, Embedding, any): no broadcast copy of it.
  if (fb.size() == 1 && fa.shape() == shape) {
    const float* x = fa.data<float>();
    const float v = fb.data<float>()[0];
    for (int64_t i = 0; i < n; ++i) o[i] = x[i] != v ? 1.f : 0.f;
    return out;
  }
  const Tensor x = detail::broadcast_to(fa, shape), y = detail::broadcast_to(fb, shape);
  const float *xs = x.data<float>(), *ys = y.data<float>();
  for (int64_t i = 0; i < n; ++i) o[i] = xs[i] != ys[i] ? 1.f : 0.f;
  return out;
}

Tensor any(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  const Tensor nonzero = not_equal(x, Tensor::zeros({}));
  std::vector<int> all = axes;
  for (int d = 0; all.empty() && d < x.rank(); ++d) all.push_back(d);
  if (all.empty()) return nonzero;  // a scalar
  std::vector<int> each;
  for (int d : all) each.push_back(normalize_axis(d, x.rank()));
  return reduce_max(nonzero, each, keepdims);
}

Tensor as_mask(const Tensor& t) { return not_equal(t, Tensor::zeros({})); }

Tensor where(const Tensor& mask, const Tensor& a, const Tensor& b) {
  detail::check_float32("where", a, "a");
  detail::check_float32("where", b, "b");
  KCPP_CHECK(a.shape() == b.shape(), ValueError, "where: a and b must have the same shape. Received: ",
             shape_str(a.shape()), " and ", shape_str(b.shape()));
  const Tensor m = detail::broadcast_to(as_float(mask), a.shape());
  Tensor y = Tensor::empty(a.shape());
  const float *pm = m.data<float>(), *pa = a.data<float>(), *pb = b.data<float>();
  for (int64_t i = 0; i < y.size(); ++i) y.data<float>()[i] = pm[i] != 0.f ? pa[i] : pb[i];
  if (Recorder* r = tape_for({&a, &b}))
    r->record("where", {mask, a, b}, y, [m](const Tensor& dy) {
      Tensor da = Tensor::empty(dy.shape()), db = Tensor::empty(dy.shape());
      for (int64_t i = 0; i < dy.size(); ++i) {
        const bool keep = m.data<float>()[i] != 0.f;
        da.data<float>()[i] = keep ? dy.data<float>()[i] : 0.f;
        db.data<float>()[i] = keep ? 0.f : dy.data<float>()[i];
      }
      return Grads{Tensor(), da, db};
    });
  return y;
}

}  // namespace kerascpp::ops
