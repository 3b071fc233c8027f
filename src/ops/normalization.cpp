// Normalisation ops: batch_normalization (inference), layer_normalization, group_normalization and
// l2_normalize over several axes. Shapes are checked here; kernels/normalization.h does the work.
//
// Statistics over a set of axes run on x viewed as (outer, n, inner) when the axes are adjacent
// (the common cases: the last axis, trailing blocks, one middle axis). Other sets (axis=[1, 3] of a
// 4D x) are moved to the end by a transpose and moved back afterwards.
#include "kernels/normalization.h"

#include <algorithm>
#include <cmath>

#include "kernels/reduce.h"
#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/normalization_grad.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

// Normalised, sorted, distinct axes; ValueError naming the op for an axis out of range.
std::vector<int> sorted_axes(const char* op, const std::vector<int>& axes, int rank) {
  KCPP_CHECK(!axes.empty(), ValueError, op, ": expected at least one axis. Received: axes=[]");
  std::vector<int> out;
  for (int a : axes) out.push_back(detail::normalize_axis_for(op, a, rank));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// gamma / beta: undefined, or float32 of shape (n,).
const float* optional_param(const char* op, const Tensor& t, const char* name, int64_t n) {
  if (!t.defined()) return nullptr;
  detail::check_float32(op, t, name);
  KCPP_CHECK(t.shape() == Shape{n}, ValueError, op, ": `", name, "` must have shape (", n,
             ",). Received: ", name, ".shape=", shape_str(t.shape()));
  return t.data<float>();
}

// Runs f(x viewed as (outer, n, inner), y) with the reduced `axes` (sorted) as the middle block.
template <typename F>
Tensor over_axes(const Tensor& x, const std::vector<int>& axes, F f) {
  const Shape& s = x.shape();
  const int rank = x.rank();
  Tensor y = Tensor::empty(s);
  if (axes.back() - axes.front() + 1 == static_cast<int>(axes.size())) {
    int64_t outer = 1, n = 1, inner = 1;
    for (int d = 0; d < rank; ++d) (d < axes.front() ? outer : d > axes.back() ? inner : n) *= s[d];
    f(x.data<float>(), y.data<float>(), outer, n, inner);
    return y;
  }
  std::vector<int> perm, inverse(rank);
  for (int d = 0; d < rank; ++d)
    if (!std::binary_search(axes.begin(), axes.end(), d)) perm.push_back(d);
  perm.insert(perm.end(), axes.begin(), axes.end());
  for (int d = 0; d < rank; ++d) inverse[perm[d]] = d;
  Tensor xt = transpose(x, perm), yt = Tensor::empty(xt.shape());
  int64_t n = 1;
  for (int a : axes) n *= s[a];
  f(xt.data<float>(), yt.data<float>(), n == 0 ? 0 : x.size() / n, n, 1);
  return transpose(yt, inverse);
}

}  // namespace

Tensor batch_normalization(const Tensor& x, const Tensor& mean, const Tensor& variance, const Tensor& offset,
                           const Tensor& scale, int axis, float epsilon) {
  const char* op = "batch_normalization";
  detail::check_float32(op, x, "x");
  const int ax = detail::normalize_axis_for(op, axis, x.rank());
  const int64_t c = x.shape()[ax];
  for (auto [t, name] : {std::pair{&mean, "mean"}, std::pair{&variance, "variance"}}) {
    detail::check_float32(op, *t, name);
    KCPP_CHECK(t->shape() == Shape{c}, ValueError, op, ": `", name, "` must have shape (", c,
               ",) to match axis ", axis, " of x. Received: x.shape=", shape_str(x.shape()), ", ", name,
               ".shape=", shape_str(t->shape()));
  }
  const float* beta = optional_param(op, offset, "offset", c);
  const float* gamma = optional_param(op, scale, "scale", c);
  // y = x * inv + (offset - mean * inv), inv = rsqrt(var + eps) * scale, as tf.nn.batch_normalization.
  Tensor inv = Tensor::empty({c}), shift = Tensor::empty({c});
  kernels::batch_normalization_fold(mean.data<float>(), variance.data<float>(), gamma, beta, epsilon, c,
                                    inv.data<float>(), shift.data<float>());
  const detail::AxisSplit s = detail::split_axis(x.shape(), ax);
  Tensor y = Tensor::empty(x.shape());
  kernels::batch_normalization(x.data<float>(), y.data<float>(), inv.data<float>(), shift.data<float>(), s.outer,
                               s.axis, s.inner);
  if (Recorder* r = tape_for({&x, &mean, &variance, &offset, &scale}))
    r->record(op, {x, mean, variance, offset, scale}, y, [=](const Tensor& dy) {
      return detail::batch_normalization_grad(x, mean, variance, offset, scale, ax, epsilon, dy);
    });
  return y;
}

Tensor layer_normalization(const Tensor& x, const Tensor& gamma, const Tensor& beta, const std::vector<int>& axes,
                           float epsilon, bool rms_scaling) {
  const char* op = "layer_normalization";
  detail::check_float32(op, x, "x");
  const std::vector<int> ax = sorted_axes(op, axes, x.rank());
  int64_t n = 1;
  for (int a : ax) n *= x.shape()[a];
  const float* g = optional_param(op, gamma, "gamma", n);
  const float* b = optional_param(op, beta, "beta", n);
  Tensor y;
  {
    NoRecord pause;  // over_axes may transpose: those are not steps of the user's graph
    y = over_axes(x, ax, [&](const float* xp, float* yp, int64_t outer, int64_t len, int64_t inner) {
      kernels::layer_normalization(xp, yp, g, b, outer, len, inner, epsilon, rms_scaling);
    });
  }
  if (Recorder* r = tape_for({&x, &gamma, &beta}))
    r->record(op, {x, gamma, beta}, y, [=](const Tensor& dy) {
      return detail::normalize_over_axes_grad(x, gamma, beta, ax, epsilon, rms_scaling, dy);
    });
  return y;
}

Tensor group_normalization(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t groups, int axis,
                           float epsilon) {
  const char* op = "group_normalization";
  detail::check_float32(op, x, "x");
  const int ax = detail::normalize_axis_for(op, axis, x.rank());
  KCPP_CHECK(ax > 0, ValueError, op, ": the channel axis cannot be the batch axis 0. Received: axis=", axis);
  const int64_t c = x.shape()[ax];
  KCPP_CHECK(groups > 0 && c % groups == 0, ValueError, op, ": the number of channels (", c,
             ") must be a multiple of the number of groups. Received: groups=", groups);
  const float* g = optional_param(op, gamma, "gamma", c);
  const float* b = optional_param(op, beta, "beta", c);
  int64_t pre = 1, post = 1;
  for (int d = 1; d < ax; ++d) pre *= x.shape()[d];
  for (int d = ax + 1; d < x.rank(); ++d) post *= x.shape()[d];
  Tensor y = Tensor::empty(x.shape());
  kernels::group_normalization(x.data<float>(), y.data<float>(), g, b, x.shape()[0], pre, groups, c / groups, post,
                               epsilon);
  if (Recorder* r = tape_for({&x, &gamma, &beta}))
    r->record(op, {x, gamma, beta}, y, [=](const Tensor& dy) {
      return detail::group_normalization_grad(x, gamma, beta, groups, ax, epsilon, dy);
    });
  return y;
}

Tensor l2_normalize(const Tensor& x, const std::vector<int>& axes, float epsilon) {
  const char* op = "l2_normalize";
  detail::check_float32(op, x, "x");
  KCPP_CHECK(epsilon >= 0, ValueError, op, ": epsilon must be >= 0. Received: epsilon=", epsilon);
  const std::vector<int> ax = sorted_axes(op, axes, x.rank());
  Tensor y;
  {
    NoRecord pause;
    y = over_axes(x, ax, [&](const float* xp, float* yp, int64_t outer, int64_t n, int64_t inner) {
      kernels::l2_normalize(xp, yp, outer, n, inner, epsilon);
    });
  }
  if (Recorder* r = tape_for({&x}))
    r->record(op, {x}, y, [=](const Tensor& dy) { return Grads{detail::l2_normalize_grad(x, y, dy, ax, epsilon)}; });
  return y;
}

}  // namespace kerascpp::ops
