// not_equal and any: Keras 3's mask ops (Embedding(mask_zero) and Masking record them in graphs).
// Booleans are float32 0 / 1 here, which is how kerascpp carries masks; no gradient (Keras's are bool).
#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/ops.h"

namespace kerascpp::ops {
namespace {

Tensor as_float(const Tensor& t) { return t.dtype() == DType::float32 ? t : t.astype(DType::float32); }

}  // namespace

Tensor not_equal(const Tensor& a, const Tensor& b) {
  const Tensor fa = as_float(a), fb = as_float(b);
  const Shape shape = detail::broadcast_shape_for("not_equal", fa.shape(), fb.shape());
  const Tensor x = detail::broadcast_to(fa, shape), y = detail::broadcast_to(fb, shape);
  Tensor out = Tensor::empty(shape);
  for (int64_t i = 0; i < out.size(); ++i) out.data<float>()[i] = x.data<float>()[i] != y.data<float>()[i] ? 1.f : 0.f;
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

}  // namespace kerascpp::ops
