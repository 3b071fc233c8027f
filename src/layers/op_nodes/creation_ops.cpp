// Op nodes that make a tensor from values a graph computes: keras.ops full (a shape filled with a
// tensor's value), array (a tensor as it is, cast), linspace / logspace / geomspace between tensors
// (tf.linspace's arithmetic, so the values equal Keras's), histogram (counts and edges), and
// TensorFlow's shape / size / rank of a tensor and zeros / ones / fill of a computed shape.
#include <algorithm>
#include <cmath>

#include "layers/op_nodes/op_node.h"
#include "ops/grad_util.h"

namespace kerascpp::layers::op_nodes {
namespace {
using ops::BinaryOp;

// x cast to the op's dtype argument when one is given (null: float32 as it is).
Tensor with_dtype(const Args<Tensor>& a, const Tensor& x) { return a.has("dtype") ? cast_to(a, x, "dtype") : x; }

// ---- full(shape, fill_value): fill_value (a number or a tensor) broadcast to the shape.
Shape full_shape(const Args<Shape>& a) {
  const Shape s = a.get<Shape>("shape", {});
  for (int64_t d : s)
    if (d < 0) a.fail("shape", "a shape of known, non-negative dims");
  const Shape v = a.value("fill_value");
  bool fits = v.size() <= s.size();
  for (size_t i = 0; fits && i < v.size(); ++i) fits = v[v.size() - 1 - i] == 1 || v[v.size() - 1 - i] == s[s.size() - 1 - i];
  KCPP_CHECK(fits, ValueError, a.who(), ": fill_value of shape ", shape_str(v), " cannot be broadcast to shape ", shape_str(s));
  return s;
}
Tensor full(const Args<Tensor>& a) {
  const Shape s = a.get<Shape>("shape", {});
  // Broadcast by adding zeros: the fill value's gradient sums back over the broadcast dims.
  return with_dtype(a, ops::binary(BinaryOp::add, a.value("fill_value"), ops::detail::filled(s, 0.f)));
}

Tensor array(const Args<Tensor>& a) { return with_dtype(a, a.value("x")); }

// ---- linspace(start, stop, num, endpoint, axis): start and stop broadcast together; `num` values along
// `axis` (inserted there). tf.linspace's arithmetic: start + delta * i for the inner values, start and
// stop themselves at the ends.
template <class T>
int64_t num_of(const Args<T>& a) {
  const int64_t n = a.template get<int64_t>("num", 50);
  if (n < 0) a.fail("num", "a non-negative integer");
  return n;
}
Shape space_shape(const Args<Shape>& a) {
  Shape s = ops::broadcast_shape(a.value("start"), a.value("stop"));
  const int r = static_cast<int>(s.size()) + 1;
  int axis = a.get<int>("axis", 0);
  if (axis < -r || axis >= r) a.fail("axis", "an axis of the result's " + std::to_string(r) + " dims");
  if (axis < 0) axis += r;
  s.insert(s.begin() + axis, num_of(a));
  return s;
}
Tensor expand(const Tensor& t, int axis) {
  Shape s = t.shape();
  s.insert(s.begin() + axis, 1);
  return t.reshape(s);
}
// tf.linspace(start, stop, num, axis) with start / stop broadcast already.
Tensor tf_linspace(const Tensor& start, const Tensor& stop, int64_t num, int axis) {
  const Tensor lo = expand(start, axis), hi = expand(stop, axis);
  const Tensor delta = ops::binary(BinaryOp::divide, ops::binary(BinaryOp::subtract, hi, lo),
                                   ops::detail::scalar(static_cast<float>(std::max<int64_t>(num - 1, 1))));
  std::vector<Tensor> parts = {lo};
  if (num > 2) {
    Shape is(lo.rank(), 1);
    is[axis] = num - 2;
    Tensor steps = Tensor::empty(is);
    for (int64_t i = 0; i < num - 2; ++i) steps.data<float>()[i] = static_cast<float>(i + 1);
    parts.push_back(ops::binary(BinaryOp::add, lo, ops::binary(BinaryOp::multiply, delta, steps)));
  }
  parts.push_back(hi);
  const Tensor all = ops::concatenate(parts, axis);
  std::vector<int64_t> begin(all.rank(), 0), size = all.shape();
  size[axis] = num;
  return ops::slice(all, begin, size);
}
// Keras's linspace between start and stop (broadcast together): endpoint=False runs tf.linspace to
// stop - (stop - start) / num; an integer dtype truncates start and stop, and floors the values.
Tensor keras_linspace(const Args<Tensor>& a, Tensor start, Tensor stop) {
  const Json& d = a.json("dtype");
  const bool integer = d.is_string() && d.get<std::string>().find("int") != std::string::npos;
  if (integer) start = cast_to(a, start, "dtype"), stop = cast_to(a, stop, "dtype");  // Keras converts them first
  const Shape s = ops::broadcast_shape(start.shape(), stop.shape());
  start = ops::binary(BinaryOp::add, start, ops::detail::filled(s, 0.f));
  stop = ops::binary(BinaryOp::add, stop, ops::detail::filled(s, 0.f));
  const int64_t num = num_of(a);
  int axis = a.get<int>("axis", 0);
  if (axis < 0) axis += static_cast<int>(s.size()) + 1;
  if (!a.get("endpoint", true) && num > 1) {
    const Tensor step = ops::binary(BinaryOp::divide, ops::binary(BinaryOp::subtract, stop, start),
                                    ops::detail::scalar(static_cast<float>(num)));
    stop = ops::binary(BinaryOp::subtract, stop, step);
  }
  Tensor y = tf_linspace(start, stop, num, axis);
  if (integer)
    y = ops::map_unary("floor", y, [](float v) { return std::floor(v); }, nullptr);
  return with_dtype(a, y);
}
Tensor linspace(const Args<Tensor>& a) {
  if (a.get("retstep", false)) a.fail("retstep", "supported by kerascpp (the step is a second output)");
  return keras_linspace(a, a.value("start"), a.value("stop"));
}
// logspace: base ** linspace(start, stop), as exp(linspace * ln base).
Tensor power_of(float base, const Tensor& exponent) {
  return ops::unary(ops::UnaryOp::exp, ops::scale_shift(exponent, std::log(base), 0.f));
}
Tensor logspace(const Args<Tensor>& a) {
  return power_of(a.get<float>("base", 10.f), keras_linspace(a, a.value("start"), a.value("stop")));
}
// geomspace: logspace between log10 |start| and log10 |stop|, times start's sign broadcast against
// the result as Keras's TF backend does it (not expanded at `axis`: only a scalar start, or axis=0 where
// the shapes agree, broadcasts).
Tensor geomspace(const Args<Tensor>& a) {
  const Tensor start = a.value("start"), stop = a.value("stop");
  auto log10_abs = [](const Tensor& t) {
    return ops::binary(BinaryOp::divide, ops::unary(ops::UnaryOp::log, ops::unary(ops::UnaryOp::abs, t)),
                       ops::detail::scalar(std::log(10.f)));
  };
  const Tensor y = power_of(10.f, keras_linspace(a, log10_abs(start), log10_abs(stop)));
  const Tensor sign = ops::map_unary("sign", start, [](float v) { return static_cast<float>((v > 0) - (v < 0)); }, nullptr);
  return ops::binary(BinaryOp::multiply, y, sign);
}
Shape geomspace_shape(const Args<Shape>& a) { return ops::broadcast_shape(space_shape(a), a.value("start")); }

// ---- histogram(x, bins, range): the counts of x's values in `bins` equal bins over [min, max] (x's own
// range when none is given; values outside are dropped), and the bins' edges. No gradient.
std::vector<Shape> histogram_shapes(const Args<Shape>& a) {
  const int64_t bins = a.get<int64_t>("bins", 10);
  if (bins < 1) a.fail("bins", "a positive integer");
  return {{bins}, {bins + 1}};
}
std::vector<Tensor> histogram(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const int64_t bins = a.get<int64_t>("bins", 10);
  if (bins < 1) a.fail("bins", "a positive integer");
  const float* v = x.data<float>();
  float lo = INFINITY, hi = -INFINITY;
  if (a.has("range")) {
    const std::vector<float> r = a.get<std::vector<float>>("range", {});
    if (r.size() != 2 || !(r[0] <= r[1])) a.fail("range", "a pair (min, max) with min <= max");
    lo = r[0], hi = r[1];
  } else {
    for (int64_t i = 0; i < x.size(); ++i) lo = std::min(lo, v[i]), hi = std::max(hi, v[i]);
    KCPP_CHECK(x.size() > 0, ValueError, a.who(), ": the histogram of an empty tensor has no range; give `range`");
  }
  // The edges as tf.linspace makes them; a value goes to the bin searchsorted(inner edges, side right) finds.
  Tensor edges = tf_linspace(ops::detail::scalar(lo), ops::detail::scalar(hi), bins + 1, 0);
  Tensor counts = ops::detail::filled({bins}, 0.f);
  const float* e = edges.data<float>();
  for (int64_t i = 0; i < x.size(); ++i) {
    if (!(v[i] >= lo && v[i] <= hi)) continue;
    const int64_t b = std::upper_bound(e + 1, e + bins, v[i]) - (e + 1);
    counts.data<float>()[b] += 1.f;
  }
  return {counts, edges};
}

// ---- tf.zeros / tf.ones (shape, dtype) and tf.fill (dims, value), which tf_keras records when the
// shape is a tensor the graph computes (tf.zeros(tf.shape(x)[:2])): a shape of unknown dims until the
// model runs.
template <class T>
Shape filled_shape_of(const Args<T>& a, const char* name) {
  Shape s;
  for (int64_t d : a.ints(name)) {
    if (d < 0 && d != kComputed) a.fail(name, "a shape of dims >= 0");
    s.push_back(d == kComputed ? -1 : d);
  }
  return s;
}
Shape zeros_shape(const Args<Shape>& a) { return filled_shape_of(a, "shape"); }
template <int value>
Tensor constant_filled(const Args<Tensor>& a) {
  return with_dtype(a, ops::detail::filled(filled_shape_of(a, "shape"), static_cast<float>(value)));
}
Shape fill_shape(const Args<Shape>& a) {
  if (!a.value("value").empty()) a.fail("value", "a scalar");
  return filled_shape_of(a, "dims");
}
Tensor fill(const Args<Tensor>& a) {
  const Tensor v = a.value("value");
  if (v.rank() != 0) a.fail("value", "a scalar");
  return ops::binary(BinaryOp::add, v, ops::detail::filled(filled_shape_of(a, "dims"), 0.f));  // the value's gradient sums
}

// ---- tf.shape / tf.size / tf.rank (tf_keras records them as TFOpLambda): the input's run-time dims,
// the batch's included, as exact integers carried as float32.
Shape dims_shape(const Args<Shape>& a) { return {static_cast<int64_t>(a.value("input").size())}; }
Tensor dims(const Args<Tensor>& a) {
  const Shape s = a.value("input").shape();
  return Tensor::from_vector({static_cast<int64_t>(s.size())}, std::vector<float>(s.begin(), s.end()));
}
Shape scalar(const Args<Shape>&) { return {}; }
Tensor size(const Args<Tensor>& a) { return ops::detail::scalar(static_cast<float>(a.value("input").size())); }
Tensor rank(const Args<Tensor>& a) { return ops::detail::scalar(static_cast<float>(a.value("input").rank())); }

}  // namespace

std::vector<OpDef> creation_ops() {
  OpDef hist{"ops.numpy.Histogram", nullptr, {"x", "bins", "range"}, {}, nullptr, nullptr};
  hist.shapes = histogram_shapes;
  hist.calls = histogram;
  return {
      OpDef{"ops.numpy.Full", nullptr, {"fill_value", "shape", "dtype"}, {}, full_shape, full},
      OpDef{"ops.numpy.Array", nullptr, {"x", "dtype"}, {}, same_shape, array},
      OpDef{"ops.numpy.Linspace", "linspace|lin_space", {"start", "stop", "num", "endpoint", "retstep", "dtype", "axis"}, {}, space_shape,
            linspace},
      OpDef{"ops.numpy.Logspace", nullptr, {"start", "stop", "num", "endpoint", "base", "dtype", "axis"}, {}, space_shape,
            logspace},
      OpDef{"ops.numpy.Geomspace", nullptr, {"start", "stop", "num", "endpoint", "dtype", "axis"}, {}, geomspace_shape,
            geomspace},
      hist,
      OpDef{nullptr, "shape|compat.v1.shape|shape_v2", {"input", "out_type"}, {}, dims_shape, dims},
      OpDef{nullptr, "size|compat.v1.size|size_v2", {"input", "out_type"}, {}, scalar, size},
      OpDef{nullptr, "rank", {"input"}, {}, scalar, rank},
      OpDef{nullptr, "zeros", {"shape", "dtype"}, {}, zeros_shape, constant_filled<0>},
      OpDef{nullptr, "ones", {"shape", "dtype"}, {}, zeros_shape, constant_filled<1>},
      OpDef{nullptr, "fill", {"dims", "value"}, {}, fill_shape, fill},
  };
}

}  // namespace kerascpp::layers::op_nodes
