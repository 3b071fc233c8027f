// The NaN-ignoring op nodes of keras.ops: nan_to_num, nansum / nanmean / nanmax / nanmin / nanprod /
// nanvar / nanstd, nanargmax / nanargmin, nancumsum / nancumprod, as Keras's TensorFlow backend computes
// them: NaN replaced by the reduction's identity (nancumsum and nancumprod go through nan_to_num, which
// also turns +-inf into +-float32 max), NaN where every value reduced is NaN (nanmax, nanmin, nanmean,
// nanvar), -1 for the index of an all-NaN slice.
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "layers/op_nodes/op_node.h"
#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {

namespace cumulative {  // cumulative_ops.cpp
Tensor prod_kept(const Tensor& x, const std::vector<int>& axes);
Tensor scan(const Tensor& x, int axis, bool product, bool exclusive, bool reverse);
Tensor with_dtype(const Args<Tensor>& a, const Tensor& x);
}  // namespace cumulative

namespace {
using namespace cumulative;  // NOLINT: this family's helpers
using ops::BinaryOp;
using ops::UnaryOp;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kMax = std::numeric_limits<float>::max();

// x with NaN replaced by `nan` and, when `infinities`, +inf by posinf and -inf by neginf. The gradient
// passes where a value is kept and is 0 where it was replaced, as tf.where selects it.
Tensor replaced(const Tensor& x, float nan, bool infinities = false, float posinf = kMax, float neginf = -kMax) {
  Tensor y = Tensor::empty(x.shape());
  Tensor kept = Tensor::empty(x.shape());
  for (int64_t i = 0; i < x.size(); ++i) {
    const float v = x.data<float>()[i];
    float out = v;
    if (std::isnan(v)) out = nan;
    else if (infinities && std::isinf(v)) out = v > 0 ? posinf : neginf;
    y.data<float>()[i] = out;
    kept.data<float>()[i] = std::isnan(v) || (infinities && std::isinf(v)) ? 0.f : 1.f;
  }
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("nan_to_num", {x}, y, [kept](const Tensor& dy) {
      Tensor dx = Tensor::empty(dy.shape());  // selected, so that a NaN reaching a replaced value stays out
      for (int64_t i = 0; i < dx.size(); ++i) dx.data<float>()[i] = kept.data<float>()[i] != 0.f ? dy.data<float>()[i] : 0.f;
      return ops::Grads{dx};
    });
  return y;
}
// 1 where x is not NaN, else 0 (no gradient).
Tensor not_nan(const Tensor& x) {
  Tensor m = Tensor::empty(x.shape());
  for (int64_t i = 0; i < x.size(); ++i) m.data<float>()[i] = std::isnan(x.data<float>()[i]) ? 0.f : 1.f;
  return m;
}

float number(const Args<Tensor>& a, const char* name, float fallback) {
  return a.get<float>(name, fallback);  // Python's inf too (posinf=numpy.inf)
}
Tensor nan_to_num(const Args<Tensor>& a) {
  return replaced(a.value("x"), number(a, "nan", 0.f), true, number(a, "posinf", kMax), number(a, "neginf", -kMax));
}

Tensor nansum(const Args<Tensor>& a) { return reduced(a, replaced(a.value("x"), 0.f), ops::detail::sum_axes); }
Tensor nanprod(const Args<Tensor>& a) { return reduced(a, replaced(a.value("x"), 1.f), prod_kept); }
Tensor nanmean_kept(const Tensor& x, const std::vector<int>& axes) {
  return ops::binary(BinaryOp::divide, ops::detail::sum_axes(replaced(x, 0.f), axes), ops::detail::sum_axes(not_nan(x), axes));
}
Tensor nanmean(const Args<Tensor>& a) { return reduced(a, a.value("x"), nanmean_kept); }
Tensor nanvar_kept(const Tensor& x, const std::vector<int>& axes) {
  const Tensor valid = not_nan(x), clean = replaced(x, 0.f);
  const Tensor count = ops::detail::sum_axes(valid, axes);
  const Tensor mean = ops::binary(BinaryOp::divide, ops::detail::sum_axes(clean, axes), count);
  const Tensor centred = ops::binary(BinaryOp::multiply, ops::binary(BinaryOp::subtract, clean, mean), valid);
  return ops::binary(BinaryOp::divide, ops::detail::sum_axes(ops::unary(UnaryOp::square, centred), axes), count);
}
Tensor nanvar(const Args<Tensor>& a) { return reduced(a, a.value("x"), nanvar_kept); }
Tensor nanstd(const Args<Tensor>& a) {
  return reduced(a, a.value("x"), [](const Tensor& x, const std::vector<int>& axes) {
    return ops::unary(UnaryOp::sqrt, nanvar_kept(x, axes));
  });
}
// nanmax / nanmin: NaN as -inf / +inf, and NaN where every value reduced is NaN.
template <bool largest>
Tensor nan_extreme(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const Tensor r = reduced(a, replaced(x, largest ? -kInf : kInf), largest ? max_kept : min_kept);
  const Tensor any_valid = reduced(a, not_nan(x), max_kept);
  Tensor nans = Tensor::empty(r.shape());
  for (int64_t i = 0; i < nans.size(); ++i) nans.data<float>()[i] = kNaN;
  return ops::where(any_valid, r, nans);
}

// nanargmax / nanargmin(x, axis=None, keepdims=False): the index of the first extreme value that is not
// NaN along one axis (over the flattened tensor when axis is null), -1 where all are NaN; float32.
Shape nanarg_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  a.check(a.json("axis").is_null() || a.json("axis").is_number_integer(), "axis", "one int or None");
  if (!a.has("axis")) return a.get("keepdims", false) ? Shape(x.size(), 1) : Shape{};
  return reduce_shape(a);
}
template <bool largest>
Tensor nanarg(const Args<Tensor>& a) {
  Tensor x = a.value("x");
  const Shape in_shape = x.shape();
  a.check(a.json("axis").is_null() || a.json("axis").is_number_integer(), "axis", "one int or None");
  const bool flat = !a.has("axis");
  if (flat) x = x.reshape({x.size()});
  const int axis = flat ? 0 : axis_in(a, "axis", a.get("axis", 0), x.rank());
  KCPP_CHECK(x.rank() > 0, ValueError, a.who(), ": the input must have rank >= 1 (or axis=None)");
  const ops::detail::AxisSplit s = ops::detail::split_axis(x.shape(), axis);
  Shape kept = x.shape();
  kept[axis] = 1;
  Tensor y = Tensor::empty(kept);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      const float* p = x.data<float>() + o * s.axis * s.inner + i;
      int64_t best = -1;
      for (int64_t k = 0; k < s.axis; ++k) {
        const float v = p[k * s.inner];
        if (std::isnan(v)) continue;
        if (best < 0 || (largest ? v > p[best * s.inner] : v < p[best * s.inner])) best = k;
      }
      y.data<float>()[o * s.inner + i] = static_cast<float>(best);
    }
  if (flat) return y.reshape(a.get("keepdims", false) ? Shape(in_shape.size(), 1) : Shape{});
  if (a.get("keepdims", false)) return y;
  Shape out = x.shape();
  out.erase(out.begin() + axis);
  return y.reshape(out);
}

// nancumsum / nancumprod: nan_to_num (NaN as 0 / 1, +-inf as +-float32 max), then cumsum / cumprod.
Shape nanscan_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  a.check(a.json("axis").is_null() || a.json("axis").is_number_integer(), "axis", "one int or None");
  if (!a.has("axis")) {
    int64_t n = 1;
    for (int64_t d : x) n = n < 0 || d < 0 ? -1 : n * d;
    return {n};
  }
  axis_in(a, "axis", a.get("axis", 0), static_cast<int>(x.size()));
  return x;
}
template <bool product>
Tensor nanscan(const Args<Tensor>& a) {
  Tensor x = replaced(a.value("x"), product ? 1.f : 0.f, true);
  x = with_dtype(a, x);
  a.check(a.json("axis").is_null() || a.json("axis").is_number_integer(), "axis", "one int or None");
  const bool flat = !a.has("axis");
  if (flat) x = x.reshape({x.size()});
  KCPP_CHECK(x.rank() > 0, ValueError, a.who(), ": the input must have rank >= 1 (or axis=None)");
  return with_dtype(a, scan(x, flat ? 0 : axis_in(a, "axis", a.get("axis", 0), x.rank()), product, false, false));
}

#define NAN_REDUCE(keras, fn) OpDef{keras, nullptr, {"x", "axis", "keepdims"}, {}, reduce_shape, fn}

}  // namespace

std::vector<OpDef> cumulative_nan_ops() {
  return {
      OpDef{"ops.numpy.NanToNum", nullptr, {"x", "nan", "posinf", "neginf"}, {}, same_shape, nan_to_num},
      NAN_REDUCE("ops.numpy.Nansum", nansum),
      NAN_REDUCE("ops.numpy.Nanprod", nanprod),
      NAN_REDUCE("ops.numpy.Nanmean", nanmean),
      NAN_REDUCE("ops.numpy.Nanvar", nanvar),
      NAN_REDUCE("ops.numpy.Nanstd", nanstd),
      NAN_REDUCE("ops.numpy.Nanmax", nan_extreme<true>),
      NAN_REDUCE("ops.numpy.Nanmin", nan_extreme<false>),
      OpDef{"ops.numpy.Nanargmax", nullptr, {"x", "axis", "keepdims"}, {}, nanarg_shape, nanarg<true>},
      OpDef{"ops.numpy.Nanargmin", nullptr, {"x", "axis", "keepdims"}, {}, nanarg_shape, nanarg<false>},
      OpDef{"ops.numpy.Nancumsum", nullptr, {"x", "axis", "dtype"}, {}, nanscan_shape, nanscan<false>},
      OpDef{"ops.numpy.Nancumprod", nullptr, {"x", "axis", "dtype"}, {}, nanscan_shape, nanscan<true>},
  };
}

}  // namespace kerascpp::layers::op_nodes
