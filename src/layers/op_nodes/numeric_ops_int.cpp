// Numeric op nodes on integers and booleans: gcd / lcm, the bitwise ops and shifts (keras.ops.numpy
// and tf.bitwise), isclose / allclose, isin, isneginf / isposinf, ndim / size, and tf.math's
// is_non_decreasing / is_strictly_increasing. kerascpp carries integers as exact float32 values: these
// ops compute on int32 (Keras's integer dtype for them; its wrap-around included) and refuse at run
// time a value that is not an integer or lies beyond 2^24, where float32 no longer holds every integer.
// Their results have no gradient.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <utility>

#include "layers/op_nodes/op_node.h"
#include "ops/grad_util.h"

namespace kerascpp::layers::op_nodes {

std::vector<OpDef> numeric_int_ops();

namespace {

constexpr float kLimit = 16777216.f;  // 2^24

// The int32 an argument's element holds, refused with a ValueError naming the op and the argument
// when it is not an integer or beyond 2^24.
int32_t integer(const Args<Tensor>& a, const char* name, float v) {
  KCPP_CHECK(
      v == std::trunc(v), ValueError, a.who(), ": argument '", name, "' holds ", v,
      ", which is not an integer (this op takes integer tensors, which kerascpp carries as float32 values)");
  KCPP_CHECK(
      std::fabs(v) <= kLimit, ValueError, a.who(), ": argument '", name, "' holds ", v,
      ", beyond 2^24 = 16777216, where kerascpp's float32 values no longer hold every integer exactly");
  return static_cast<int32_t>(v);
}

// f over the int32 values of x and y broadcast together (numpy rules), as float32.
template <int32_t (*f)(int32_t, int32_t)>
Tensor int_binary(const Args<Tensor>& a, const char* xn, const char* yn) {
  const Tensor x = a.value(xn), y = a.value(yn);
  const Shape s = ops::broadcast_shape(x.shape(), y.shape());
  const Tensor X = ops::detail::broadcast_to(x, s), Y = ops::detail::broadcast_to(y, s);
  Tensor out = Tensor::empty(s);
  for (int64_t i = 0; i < out.size(); ++i)
    out.data<float>()[i] =
        static_cast<float>(f(integer(a, xn, X.data<float>()[i]), integer(a, yn, Y.data<float>()[i])));
  return out;
}
template <int32_t (*f)(int32_t, int32_t)>
Tensor int_xy(const Args<Tensor>& a) {
  return int_binary<f>(a, "x", "y");
}
template <int32_t (*f)(int32_t, int32_t)>
Tensor int_x1x2(const Args<Tensor>& a) {
  return int_binary<f>(a, "x1", "x2");
}
Tensor invert(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  Tensor out = Tensor::empty(x.shape());
  for (int64_t i = 0; i < x.size(); ++i)
    out.data<float>()[i] = static_cast<float>(~integer(a, "x", x.data<float>()[i]));
  return out;
}

int32_t bit_and(int32_t x, int32_t y) { return x & y; }
int32_t bit_or(int32_t x, int32_t y) { return x | y; }
int32_t bit_xor(int32_t x, int32_t y) { return x ^ y; }
// TensorFlow clamps the shift to [0, 31]; a left shift wraps around as unsigned.
int32_t shift_of(int32_t y) { return std::clamp(y, 0, 31); }
int32_t left_shift(int32_t x, int32_t y) {
  return static_cast<int32_t>(static_cast<uint32_t>(x) << shift_of(y));
}
int32_t right_shift(int32_t x, int32_t y) { return x >> shift_of(y); }  // arithmetic
int32_t gcd(int32_t x, int32_t y) {
  int64_t a = std::llabs(x), b = std::llabs(y);
  while (b != 0) a = std::exchange(b, a % b);
  return static_cast<int32_t>(a);
}
int32_t lcm(int32_t x, int32_t y) {  // |x| * (|y| / gcd) in int32, wrapping as Keras's; 0 when both are 0
  const int64_t g = gcd(x, y);
  return g == 0 ? 0 : static_cast<int32_t>(std::llabs(x) * (std::llabs(y) / g));
}

// isclose: |x1 - x2| <= atol + rtol |x2| in float32 as Keras computes it; NaNs close to each other only
// with equal_nan.
struct Close {
  float rtol, atol;
  bool equal_nan;
  bool operator()(float a, float b) const {
    const float bound = atol + rtol * std::fabs(b);
    const bool close = std::fabs(a - b) <= bound;
    return close || (equal_nan && std::isnan(a) && std::isnan(b));
  }
};
Close close_of(const Args<Tensor>& a) {
  return {a.get("rtol", 1e-5f), a.get("atol", 1e-8f), a.get("equal_nan", false)};
}
Tensor isclose(const Args<Tensor>& a) {
  const Tensor x = a.value("x1"), y = a.value("x2");
  const Shape s = ops::broadcast_shape(x.shape(), y.shape());
  const Tensor X = ops::detail::broadcast_to(x, s), Y = ops::detail::broadcast_to(y, s);
  const Close c = close_of(a);
  Tensor out = Tensor::empty(s);
  for (int64_t i = 0; i < out.size(); ++i)
    out.data<float>()[i] = c(X.data<float>()[i], Y.data<float>()[i]) ? 1.f : 0.f;
  return out;
}
// allclose: every element close (as isclose, or equal: two equal infinities), one boolean.
Tensor allclose(const Args<Tensor>& a) {
  const Tensor x = a.value("x1"), y = a.value("x2");
  const Shape s = ops::broadcast_shape(x.shape(), y.shape());
  const Tensor X = ops::detail::broadcast_to(x, s), Y = ops::detail::broadcast_to(y, s);
  const Close c = close_of(a);
  bool all = true;
  for (int64_t i = 0; i < X.size() && all; ++i) {
    const float u = X.data<float>()[i], v = Y.data<float>()[i];
    all = (std::isfinite(u) && std::isfinite(v) && c(u, v)) || u == v ||
          (c.equal_nan && std::isnan(u) && std::isnan(v));
  }
  return ops::detail::scalar(all ? 1.f : 0.f);
}
Shape broadcast_shape2(const Args<Shape>& a) { return ops::broadcast_shape(a.value("x1"), a.value("x2")); }
Shape x1_shape(const Args<Shape>& a) { return a.value("x1"); }
Shape scalar_shape(const Args<Shape>&) { return {}; }

// isin: whether each element of x1 equals one of x2's (any shape, flattened). NaN is in nothing.
Tensor isin(const Args<Tensor>& a) {
  const Tensor x = a.value("x1"), t = a.value("x2");
  std::vector<float> set;
  for (int64_t i = 0; i < t.size(); ++i)
    if (!std::isnan(t.data<float>()[i])) set.push_back(t.data<float>()[i]);
  std::sort(set.begin(), set.end());
  const bool invert = a.get("invert", false);
  Tensor out = Tensor::empty(x.shape());
  for (int64_t i = 0; i < x.size(); ++i) {
    const float v = x.data<float>()[i];
    out.data<float>()[i] =
        (!std::isnan(v) && std::binary_search(set.begin(), set.end(), v)) != invert ? 1.f : 0.f;
  }
  return out;
}

template <bool (*test)(float)>
Tensor elementwise_test(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  Tensor out = Tensor::empty(x.shape());
  for (int64_t i = 0; i < x.size(); ++i) out.data<float>()[i] = test(x.data<float>()[i]) ? 1.f : 0.f;
  return out;
}
bool is_neg_inf(float v) { return v == -std::numeric_limits<float>::infinity(); }
bool is_pos_inf(float v) { return v == std::numeric_limits<float>::infinity(); }

// tf.math.is_non_decreasing / is_strictly_increasing over x flattened, as TensorFlow computes them:
// every difference x[i + 1] - x[i] >= 0 (> 0); true for fewer than two elements.
template <bool strict>
Tensor monotonic(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  bool all = true;
  for (int64_t i = 0; i + 1 < x.size() && all; ++i) {
    const float d = x.data<float>()[i + 1] - x.data<float>()[i];
    all = strict ? d > 0 : d >= 0;
  }
  return ops::detail::scalar(all ? 1.f : 0.f);
}

Tensor ndim(const Args<Tensor>& a) { return ops::detail::scalar(static_cast<float>(a.value("x").rank())); }
Tensor size(const Args<Tensor>& a) { return ops::detail::scalar(static_cast<float>(a.value("x").size())); }

}  // namespace

std::vector<OpDef> numeric_int_ops() {
  const std::vector<std::string> xy = {"x", "y"}, close = {"x1", "x2", "rtol", "atol", "equal_nan"};
  return {
      OpDef{"ops.numpy.BitwiseAnd", "bitwise.bitwise_and", xy, {}, broadcast_shape, int_xy<bit_and>},
      OpDef{"ops.numpy.BitwiseOr", "bitwise.bitwise_or", xy, {}, broadcast_shape, int_xy<bit_or>},
      OpDef{"ops.numpy.BitwiseXor", "bitwise.bitwise_xor", xy, {}, broadcast_shape, int_xy<bit_xor>},
      OpDef{"ops.numpy.BitwiseInvert", "bitwise.invert", {"x"}, {}, same_shape, invert},
      OpDef{"ops.numpy.BitwiseNot", nullptr, {"x"}, {}, same_shape, invert},
      OpDef{"ops.numpy.BitwiseLeftShift", "bitwise.left_shift", xy, {}, broadcast_shape, int_xy<left_shift>},
      OpDef{"ops.numpy.LeftShift", nullptr, xy, {}, broadcast_shape, int_xy<left_shift>},
      OpDef{
          "ops.numpy.BitwiseRightShift", "bitwise.right_shift", xy, {}, broadcast_shape, int_xy<right_shift>},
      OpDef{"ops.numpy.RightShift", nullptr, xy, {}, broadcast_shape, int_xy<right_shift>},
      OpDef{"ops.numpy.Gcd", nullptr, {"x1", "x2"}, {}, broadcast_shape2, int_x1x2<gcd>},
      OpDef{"ops.numpy.Lcm", nullptr, {"x1", "x2"}, {}, broadcast_shape2, int_x1x2<lcm>},
      OpDef{"ops.numpy.Isclose", nullptr, close, {}, broadcast_shape2, isclose},
      OpDef{"ops.numpy.AllClose", nullptr, close, {}, scalar_shape, allclose},
      OpDef{"ops.numpy.IsIn", nullptr, {"x1", "x2", "assume_unique", "invert"}, {}, x1_shape, isin},
      OpDef{"ops.numpy.Isneginf", nullptr, {"x"}, {}, same_shape, elementwise_test<is_neg_inf>},
      OpDef{"ops.numpy.Isposinf", nullptr, {"x"}, {}, same_shape, elementwise_test<is_pos_inf>},
      // The rank and the element count (the batch included, as Keras computes it when it runs) as
      // constants. Keras 3 infers Ndim's symbolic shape as (rank,), but computes a scalar.
      OpDef{"ops.numpy.Ndim", nullptr, {"x"}, {}, scalar_shape, ndim},
      OpDef{"ops.numpy.Size", nullptr, {"x"}, {}, scalar_shape, size},
      OpDef{nullptr, "math.is_non_decreasing", {"x"}, {}, scalar_shape, monotonic<false>},
      OpDef{nullptr, "math.is_strictly_increasing", {"x"}, {}, scalar_shape, monotonic<true>},
  };
}

}  // namespace kerascpp::layers::op_nodes
