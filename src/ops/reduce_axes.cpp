// reduce_max / reduce_mean over a set of axes (the global poolings). Each run of neighbouring axes is
// one kernel call on x viewed as (outer, run, inner); runs are reduced from the last to the first.
#include "kernels/reduce_axes.h"

#include <algorithm>

#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

using Kernel = void (*)(const float*, float*, int64_t, int64_t, int64_t);

Tensor reduce_axes(const char* op, Kernel kernel, const Tensor& x, const std::vector<int>& axes,
                   bool keepdims) {
  detail::check_float32(op, x, "x");
  std::vector<int> ax;
  for (int a : axes) ax.push_back(detail::normalize_axis_for(op, a, x.rank()));
  std::sort(ax.begin(), ax.end());
  KCPP_CHECK(std::adjacent_find(ax.begin(), ax.end()) == ax.end(), ValueError, op,
             ": axes must not repeat. Received: axes=", axes);
  // `kept` has the reduced dims as 1: reducing a run to 1 keeps the other axes where they were.
  Tensor y = x;
  Shape kept = x.shape();
  for (size_t end = ax.size(); end > 0;) {
    size_t begin = end - 1;
    while (begin > 0 && ax[begin - 1] + 1 == ax[begin]) --begin;
    const int first = ax[begin], last = ax[end - 1];
    int64_t outer = 1, run = 1, inner = 1;
    for (int d = 0; d < first; ++d) outer *= kept[d];
    for (int d = first; d <= last; ++d) run *= kept[d];
    for (int d = last + 1; d < x.rank(); ++d) inner *= kept[d];
    for (int d = first; d <= last; ++d) kept[d] = 1;
    Tensor r = Tensor::empty(kept);
    kernel(y.data<float>(), r.data<float>(), outer, run, inner);
    y = r;
    end = begin;
  }
  if (ax.empty()) return y;
  Shape out;
  for (int d = 0; d < x.rank(); ++d)
    if (!std::binary_search(ax.begin(), ax.end(), d)) out.push_back(x.dim(d));
  if (!keepdims) y = y.reshape(out);
  if (Recorder* r = tape_for({&x})) {
    const bool is_max = kernel == kernels::reduce_max;
    r->record(op, {x}, y, [x, y, kept, is_max](const Tensor& dy) {
      if (!is_max) {  // scaled before it is broadcast: one pass over x's size, not two
        const float scale = static_cast<float>(shape_size(kept)) / static_cast<float>(x.size());
        return Grads{detail::broadcast_to(scale_shift(dy.reshape(kept), scale, 0.f), x.shape())};
      }
      const Tensor g = detail::broadcast_to(dy.reshape(kept), x.shape());
      // TensorFlow splits the gradient of a max evenly between tied maxima.
      const Tensor m = detail::broadcast_to(y.reshape(kept), x.shape());
      Tensor hit = Tensor::empty(x.shape());
      for (int64_t i = 0; i < x.size(); ++i) hit.data<float>()[i] = x.data<float>()[i] == m.data<float>()[i] ? 1.f : 0.f;
      const Tensor ties = detail::broadcast_to(detail::sum_to(hit, kept), x.shape());
      return Grads{detail::div(detail::mul(hit, g), ties)};
    });
  }
  return y;
}

}  // namespace

Tensor reduce_max(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return reduce_axes("reduce_max", kernels::reduce_max, x, axes, keepdims);
}

Tensor reduce_mean(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return reduce_axes("reduce_mean", kernels::reduce_mean, x, axes, keepdims);
}

Tensor variance(const Tensor& x, const Tensor& mean, const std::vector<int>& axes) {
  Shape kept = x.shape(), reduced;  // the reduced axes as 1 (keepdims), or left out
  std::vector<char> is_reduced(static_cast<size_t>(x.rank()), 0);
  for (int a : axes) is_reduced[static_cast<size_t>(detail::normalize_axis_for("variance", a, x.rank()))] = 1;
  for (int d = 0; d < x.rank(); ++d) {
    if (is_reduced[static_cast<size_t>(d)]) kept[d] = 1;
    else reduced.push_back(x.dim(d));
  }
  KCPP_CHECK(mean.shape() == kept || mean.shape() == reduced, ValueError, "variance: Expected a mean of shape ",
             shape_str(reduced), " or ", shape_str(kept), " (x.shape=", shape_str(x.shape()), ", axes=", axes,
             "). Received: mean.shape=", shape_str(mean.shape()));
  const Tensor m = mean.reshape(kept);
  Tensor v;
  {
    NoRecord pause;  // the same kernels as ever, in the same order: the same bits
    v = reduce_mean(unary(UnaryOp::square, binary(BinaryOp::subtract, x, m)), axes);
  }
  if (Recorder* r = tape_for({&x})) {
    const float n = static_cast<float>(x.size() / std::max<int64_t>(1, m.size()));  // an integer, as TensorFlow's
    r->record("variance", {x}, v, [x, m, kept, n](const Tensor& dv) {
      // TensorFlow's order: reduce_mean's gradient dv / n, then squared_difference's (2 * g) * (x - mean).
      Tensor s = Tensor::empty(kept);
      const float* d = dv.data<float>();
      for (int64_t i = 0; i < s.size(); ++i) s.data<float>()[i] = 2.f * (d[i] / n);
      return Grads{binary(BinaryOp::multiply, s, binary(BinaryOp::subtract, x, m))};
    });
  }
  return v;
}

}  // namespace kerascpp::ops
