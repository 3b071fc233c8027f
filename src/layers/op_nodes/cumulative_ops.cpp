// Cumulative and product op nodes: keras.ops cumsum / cumprod / prod / ptp / amax / amin / average /
// count_nonzero / diff / trapezoid and tf.math's cumsum / cumprod (exclusive, reverse) / reduce_prod /
// reduce_euclidean_norm / count_nonzero. The nan* ops are in cumulative_ops_nan.cpp, the segment
// reductions in cumulative_ops_segment.cpp; the helpers they share are declared in namespace cumulative.
//
// Running sums and products and the product along an axis are ops of their own here (raw loops with
// their backward on the tape); the others compose the differentiable primitives of ops.h.
#include <cmath>
#include <functional>
#include <numeric>

#include "layers/op_nodes/op_node.h"
#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {

std::vector<OpDef> cumulative_nan_ops();      // cumulative_ops_nan.cpp
std::vector<OpDef> cumulative_segment_ops();  // cumulative_ops_segment.cpp

namespace cumulative {



// Running sums or products of x along `axis` (exclusive: of the elements before each; reverse: from
// the end), as tf.math.cumsum / cumprod. The product's gradient is exact where x has zeros too:
// d/dx_j of sum_i g_i y_i = P_j S_j, with P_j the product before j and S_j = g_j + x_{j+1} S_{j+1}.
Tensor scan(const Tensor& x, int axis, bool product, bool exclusive, bool reverse) {
  const ops::detail::AxisSplit s = ops::detail::split_axis(x.shape(), axis);
  Tensor y = Tensor::empty(x.shape());
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const int64_t n = s.axis;
  auto at = [n, inner = s.inner, reverse](int64_t o, int64_t i, int64_t t) { return (o * n + (reverse ? n - 1 - t : t)) * inner + i; };
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      float acc = product ? 1.f : 0.f;
      for (int64_t t = 0; t < n; ++t) {
        const int64_t k = at(o, i, t);
        if (exclusive) py[k] = acc;
        acc = product ? acc * px[k] : acc + px[k];
        if (!exclusive) py[k] = acc;
      }
    }
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record(product ? "cumprod" : "cumsum", {x}, y, [x, y, axis, product, exclusive, reverse, s, at](const Tensor& dy) {
      if (!product) return ops::Grads{scan(dy, axis, false, exclusive, !reverse)};
      Tensor dx = Tensor::empty(x.shape());
      const float *px = x.data<float>(), *py = y.data<float>(), *g = dy.data<float>();
      const int64_t n = s.axis;
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          float acc = 0.f;  // S_{t+1}
          for (int64_t t = n - 1; t >= 0; --t) {
            const int64_t k = at(o, i, t);
            const float next_x = t + 1 < n ? px[at(o, i, t + 1)] : 0.f;
            if (exclusive) acc = t + 1 < n ? g[at(o, i, t + 1)] + next_x * acc : 0.f;
            else acc = g[k] + next_x * acc;
            const float before = exclusive ? py[k] : (t > 0 ? py[at(o, i, t - 1)] : 1.f);
            dx.data<float>()[k] = before * acc;
          }
        }
      return ops::Grads{dx};
    });
  return y;
}

// The product of x along one axis, kept as 1. Its gradient is the product of the others (exact with zeros).
Tensor prod_axis(const Tensor& x, int axis) {
  const ops::detail::AxisSplit s = ops::detail::split_axis(x.shape(), axis);
  Shape kept = x.shape();
  kept[axis] = 1;
  Tensor y = Tensor::empty(kept);
  const float* px = x.data<float>();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      float p = 1.f;
      for (int64_t k = 0; k < s.axis; ++k) p *= px[(o * s.axis + k) * s.inner + i];
      y.data<float>()[o * s.inner + i] = p;
    }
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("prod", {x}, y, [x, s](const Tensor& dy) {
      Tensor dx = Tensor::empty(x.shape());
      const float* px = x.data<float>();
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          const float g = dy.data<float>()[o * s.inner + i];
          float before = 1.f;
          for (int64_t k = 0; k < s.axis; ++k) {
            dx.data<float>()[(o * s.axis + k) * s.inner + i] = before;
            before *= px[(o * s.axis + k) * s.inner + i];
          }
          float after = g;
          for (int64_t k = s.axis - 1; k >= 0; --k) {
            dx.data<float>()[(o * s.axis + k) * s.inner + i] *= after;
            after *= px[(o * s.axis + k) * s.inner + i];
          }
        }
      return ops::Grads{dx};
    });
  return y;
}
Tensor prod_kept(const Tensor& x, const std::vector<int>& axes) {
  Tensor y = x;
  for (int ax : axes) y = prod_axis(y, ax);
  return y;
}

// A dtype argument of a running sum / product: the values cast as Keras casts them first (cast_to);
// accumulating in float16 / bfloat16 is not kerascpp's (it sums in float32).
Tensor with_dtype(const Args<Tensor>& a, const Tensor& x) {
  if (!a.has("dtype")) return x;
  const Json& d = a.json("dtype");
  if (d == "float16" || d == "bfloat16")
    a.fail("dtype", "supported by kerascpp (it accumulates in float32, not " + d.get<std::string>() + ")");
  return cast_to(a, x, "dtype");
}

}  // namespace cumulative

namespace {
using namespace cumulative;  // NOLINT: this family's helpers
using ops::BinaryOp;
using ops::UnaryOp;

// ---- cumsum / cumprod. Keras 3's axis=None runs over the flattened tensor; tf.math's axis defaults to 0.
Shape scan_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  if (!a.has("axis") && a.keras3()) {
    int64_t n = 1;
    for (int64_t d : x) n = n < 0 || d < 0 ? -1 : n * d;
    return {n};
  }
  a.check(a.json("axis").is_null() || a.json("axis").is_number_integer(), "axis", "one int");
  axis_in(a, "axis", a.get("axis", 0), static_cast<int>(x.size()));
  return x;
}
template <bool product>
Tensor scanned(const Args<Tensor>& a) {
  Tensor x = with_dtype(a, a.value("x"));
  const bool flat = !a.has("axis") && a.keras3();
  if (flat) x = x.reshape({x.size()});
  a.check(a.json("axis").is_null() || a.json("axis").is_number_integer(), "axis", "one int");
  KCPP_CHECK(x.rank() > 0, ValueError, a.who(), ": the input must have rank >= 1 (or axis=None)");
  const int axis = flat ? 0 : axis_in(a, "axis", a.get("axis", 0), x.rank());
  // Integer sums wrap as the dtype's do (int8: 100 + 100 = -56): the sums of wrapped values, wrapped.
  return with_dtype(a, scan(x, axis, product, a.get("exclusive", false), a.get("reverse", false)));
}

// ---- reductions
// Keras's TensorFlow backend multiplies x as it is, whatever `dtype` says.
Tensor prod(const Args<Tensor>& a) { return reduced(a, a.value("x"), prod_kept); }
Tensor amax(const Args<Tensor>& a) { return reduced(a, a.value("x"), max_kept); }
Tensor amin(const Args<Tensor>& a) { return reduced(a, a.value("x"), min_kept); }
Tensor ptp(const Args<Tensor>& a) {
  return reduced(a, a.value("x"), [](const Tensor& x, const std::vector<int>& axes) {
    return ops::binary(BinaryOp::subtract, max_kept(x, axes), min_kept(x, axes));
  });
}
// sqrt(sum(x^2)), tf.math.reduce_euclidean_norm.
Tensor euclidean_norm(const Args<Tensor>& a) {
  return reduced(a, a.value("x"), [](const Tensor& x, const std::vector<int>& axes) {
    return ops::unary(UnaryOp::sqrt, ops::detail::sum_axes(ops::unary(UnaryOp::square, x), axes));
  });
}
// The count of nonzero values (NaN counts), as float32 without gradient.
// tf.math.count_nonzero's dtype (int64 by default) does not change the values.
Tensor count_nonzero(const Args<Tensor>& a) {
  return reduced(a, ops::as_mask(a.value("x")), ops::detail::sum_axes);
}

// ---- average(x, weights=None) with axis=None in the op's config: sum(x * w) / sum(w) over the axis (every axis when null);
// weights of x's shape, or 1-D along the axis.
int average_axis(const Args<Shape>& a, int rank) {
  const Json& j = a.json("axis");
  a.check(j.is_null() || j.is_number_integer(), "axis", "one int or None");
  return j.is_null() ? -1 : axis_in(a, "axis", j.get<int>(), rank);
}
bool same_dims(const Shape& x, const Shape& w) {
  if (x.size() != w.size()) return false;
  for (size_t d = 0; d < x.size(); ++d)
    if (x[d] >= 0 && w[d] >= 0 && x[d] != w[d]) return false;
  return true;
}
Shape average_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  const int axis = average_axis(a, static_cast<int>(x.size()));
  if (a.has("weights")) {
    const Shape w = a.value("weights");
    const bool along = axis >= 0 && w.size() == 1 && (w[0] < 0 || x[axis] < 0 || w[0] == x[axis]);
    a.check(same_dims(x, w) || along, "weights", "of the shape of x, or 1-D of the length of x along the axis");
  }
  if (axis < 0) return {};
  Shape out = x;
  out.erase(out.begin() + axis);
  return out;
}
Tensor average(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  std::vector<Shape> in = {x.shape()};
  Json bound = {{"x", Json{{"kerascpp_input", 0}}}, {"axis", a.json("axis")}};
  if (a.has("weights")) {
    in.push_back(a.value("weights").shape());
    bound["weights"] = Json{{"kerascpp_input", 1}};
  }
  const Shape out = average_shape(Args<Shape>(bound, in, a.who(), true));
  const int axis = average_axis(Args<Shape>(bound, in, a.who(), true), x.rank());
  std::vector<int> axes(x.rank());
  std::iota(axes.begin(), axes.end(), 0);
  if (axis >= 0) axes = {axis};
  if (!a.has("weights")) return ops::reduce_mean(x, axes, true).reshape(out);
  Tensor w = a.value("weights");
  if (w.rank() != x.rank()) {  // 1-D along the axis
    Shape s(x.rank(), 1);
    s[axis] = w.dim(0);
    w = w.reshape(s);
  }
  const Tensor num = ops::detail::sum_axes(ops::binary(BinaryOp::multiply, x, w), axes);
  return ops::binary(BinaryOp::divide, num, ops::detail::sum_axes(w, axes)).reshape(out);
}

// ---- diff(a, n=1, axis=-1): a[1:] - a[:-1] along the axis, n times.
int diff_order(const Args<Shape>& a) {
  const int n = a.get("n", 1);
  a.check(n >= 0, "n", "a non-negative order");
  return n;
}
Shape diff_shape(const Args<Shape>& a) {
  Shape x = a.value("a");
  const int n = diff_order(a);
  if (n == 0) return x;
  KCPP_CHECK(!x.empty(), ValueError, a.who(), ": the input must have rank >= 1. Received: shape=()");
  const int axis = axis_in(a, "axis", a.get("axis", -1), static_cast<int>(x.size()));
  if (x[axis] >= 0) x[axis] = std::max<int64_t>(x[axis] - n, 0);
  return x;
}
// x[1:] - x[:-1] along `axis`.
Tensor first_difference(const Tensor& x, int axis) {
  std::vector<int64_t> begin(x.rank(), 0), size(x.shape().begin(), x.shape().end());
  size[axis] = std::max<int64_t>(x.dim(axis) - 1, 0);
  const Tensor head = ops::slice(x, begin, size);
  begin[axis] = std::min<int64_t>(1, x.dim(axis));
  return ops::binary(BinaryOp::subtract, ops::slice(x, begin, size), head);
}
Tensor diff(const Args<Tensor>& a) {
  Tensor x = a.value("a");
  std::vector<Shape> in = {x.shape()};
  const Json bound = {{"a", Json{{"kerascpp_input", 0}}}, {"n", a.json("n")}, {"axis", a.json("axis")}};
  diff_shape(Args<Shape>(bound, in, a.who(), true));  // checks n, rank and axis
  const int n = a.get("n", 1);
  if (n == 0) return x;
  const int axis = a.get("axis", -1) < 0 ? a.get("axis", -1) + x.rank() : a.get("axis", -1);
  for (int k = 0; k < n; ++k) x = first_difference(x, axis);
  return x;
}

// ---- trapezoid(y, x=None, dx=1.0, axis=-1): sum of 0.5 (y[1:] + y[:-1]) * dx along the axis, dx the
// spacing, or diff(x) where x (a constant of the op's config: 1-D, or of y's shape) gives the points.
Shape trapezoid_shape(const Args<Shape>& a) {
  Shape y = a.value("y");
  a.check(a.json("axis").is_number_integer(), "axis", "one int");
  KCPP_CHECK(!y.empty(), ValueError, a.who(), ": y must have rank >= 1. Received: shape=()");
  const int axis = axis_in(a, "axis", a.get("axis", -1), static_cast<int>(y.size()));
  if (a.has("x")) {
    const Shape x = a.value("x");
    const bool ok = x.size() == 1 ? (x[0] < 0 || y[axis] < 0 || x[0] == y[axis]) : same_dims(y, x);
    a.check(ok, "x", "1-D of the length of y along the axis, or of the shape of y");
  }
  y.erase(y.begin() + axis);
  return y;
}
Tensor trapezoid(const Args<Tensor>& a) {
  const Tensor y = a.value("y");
  std::vector<Shape> in = {y.shape()};
  Json bound = {{"y", Json{{"kerascpp_input", 0}}}, {"axis", a.json("axis")}};
  if (a.has("x")) {
    in.push_back(a.value("x").shape());
    bound["x"] = Json{{"kerascpp_input", 1}};
  }
  const Shape out = trapezoid_shape(Args<Shape>(bound, in, a.who(), true));
  const int axis = a.get("axis", -1) < 0 ? a.get("axis", -1) + y.rank() : a.get("axis", -1);
  std::vector<int64_t> begin(y.rank(), 0), size(y.shape().begin(), y.shape().end());
  size[axis] = std::max<int64_t>(y.dim(axis) - 1, 0);
  const Tensor head = ops::slice(y, begin, size);
  begin[axis] = std::min<int64_t>(1, y.dim(axis));
  const Tensor heights = ops::scale_shift(ops::binary(BinaryOp::add, ops::slice(y, begin, size), head), 0.5f, 0.f);
  Tensor area;
  if (!a.has("x")) {
    area = ops::scale_shift(heights, a.get("dx", 1.f), 0.f);
  } else {
    Tensor x = a.value("x");
    if (x.rank() == 1 && y.rank() > 1) {
      Shape s(y.rank(), 1);
      s[axis] = x.dim(0);
      x = x.reshape(s);
    }
    area = ops::binary(BinaryOp::multiply, heights, first_difference(x, axis));
  }
  return ops::detail::sum_axes(area, {axis}).reshape(out);
}

const std::vector<std::pair<std::string, std::string>> kTfReduce = {{"input_tensor", "x"}, {"keep_dims", "keepdims"}};
#define REDUCE(keras, tf, fn) OpDef{keras, tf, {"x", "axis", "keepdims"}, kTfReduce, reduce_shape, fn}

}  // namespace

std::vector<OpDef> cumulative_ops() {
  std::vector<OpDef> defs = {
      OpDef{"ops.numpy.Cumsum", nullptr, {"x", "axis", "dtype"}, {}, scan_shape, scanned<false>},
      OpDef{"ops.numpy.Cumprod", nullptr, {"x", "axis", "dtype"}, {}, scan_shape, scanned<true>},
      OpDef{nullptr, "math.cumsum|cumsum", {"x", "axis", "exclusive", "reverse"}, {}, scan_shape, scanned<false>},
      OpDef{nullptr, "math.cumprod|cumprod", {"x", "axis", "exclusive", "reverse"}, {}, scan_shape, scanned<true>},
      OpDef{"ops.numpy.Prod", nullptr, {"x", "axis", "keepdims", "dtype"}, {}, reduce_shape, prod},
      REDUCE(nullptr, "math.reduce_prod|reduce_prod", prod),
      REDUCE(nullptr, "math.reduce_euclidean_norm", euclidean_norm),
      REDUCE("ops.numpy.Amax", nullptr, amax),
      REDUCE("ops.numpy.Amin", nullptr, amin),
      REDUCE("ops.numpy.Ptp", nullptr, ptp),
      OpDef{"ops.numpy.CountNonzero", nullptr, {"x", "axis"}, {}, reduce_shape, count_nonzero},
      OpDef{nullptr, "math.count_nonzero|count_nonzero", {"x", "axis", "keepdims", "dtype"}, {{"input", "x"}, {"keep_dims", "keepdims"}},
            reduce_shape, count_nonzero},
      OpDef{"ops.numpy.Average", nullptr, {"x", "weights", "axis"}, {}, average_shape, average},
      OpDef{"ops.numpy.Diff", nullptr, {"a", "n", "axis"}, {}, diff_shape, diff},
      OpDef{"ops.numpy.Trapezoid", nullptr, {"y", "x", "dx", "axis"}, {}, trapezoid_shape, trapezoid},
  };
  for (auto more : {cumulative_nan_ops, cumulative_segment_ops})
    for (OpDef& d : more()) defs.push_back(std::move(d));
  return defs;
}

}  // namespace kerascpp::layers::op_nodes
