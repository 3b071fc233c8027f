// NN op nodes (keras.ops.nn): the activations with parameters or an axis (soft_shrink, celu, glu,
// sparsemax, ...), one_hot / multi_hot, moments, batch / RMS / layer normalisation, psnr and
// depth_to_space / space_to_depth, and the tf.nn functions tf_keras records for them (tf.one_hot,
// tf.nn.depth_to_space, ...). Losses, attention and the other tf.nn functions: nn_ops_losses.cpp.
// Formulas follow Keras 3's TensorFlow backend (keras/src/backend/tensorflow/nn.py).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "layers/op_nodes/op_node.h"
#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
std::vector<OpDef> nn_ops_losses();  // nn_ops_losses.cpp

namespace {
using ops::BinaryOp;
using ops::UnaryOp;

// y = f(x) elementwise (f may hold the op's parameters); the gradient dy * df(x, y) on the tape.
template <class F, class D>
Tensor pointwise(const char* op, const Tensor& x, F f, D df) {
  Tensor y = Tensor::empty(x.shape());
  for (int64_t i = 0; i < x.size(); ++i) y.data<float>()[i] = f(x.data<float>()[i]);
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record(op, {x}, y, [x, y, df](const Tensor& dy) {
      Tensor dx = Tensor::empty(x.shape());
      for (int64_t i = 0; i < x.size(); ++i)
        dx.data<float>()[i] = dy.data<float>()[i] * df(x.data<float>()[i], y.data<float>()[i]);
      return ops::Grads{dx};
    });
  return y;
}

// ---- activations (keras.ops.nn), as the TensorFlow backend's tf.where chains compute them
Tensor sparse_sigmoid(const Args<Tensor>& a) {
  return pointwise(
      "sparse_sigmoid", a.value("x"), [](float x) { return x <= -1.f ? 0.f : x >= 1.f ? 1.f : 0.5f * (x + 1.f); },
      [](float x, float) { return x > -1.f && x < 1.f ? 0.5f : 0.f; });
}
Tensor soft_shrink(const Args<Tensor>& a) {
  const float t = a.get("threshold", 0.5f);
  return pointwise(
      "soft_shrink", a.value("x"), [t](float x) { return x > t ? x - t : x < -t ? x + t : 0.f; },
      [t](float x, float) { return x > t || x < -t ? 1.f : 0.f; });
}
Tensor sparse_plus(const Args<Tensor>& a) {
  return pointwise(
      "sparse_plus", a.value("x"), [](float x) { return x <= -1.f ? 0.f : x < 1.f ? 0.25f * ((x + 1.f) * (x + 1.f)) : x; },
      [](float x, float) { return x <= -1.f ? 0.f : x < 1.f ? 0.5f * (x + 1.f) : 1.f; });
}
Tensor squareplus(const Args<Tensor>& a) {
  const float b = a.get("b", 4.f);
  return pointwise(
      "squareplus", a.value("x"), [b](float x) { return (x + std::sqrt(x * x + b)) / 2.f; },
      [b](float x, float) { return 0.5f * (1.f + x / std::sqrt(x * x + b)); });
}
Tensor celu(const Args<Tensor>& a) {
  const float alpha = a.get("alpha", 1.f);
  if (alpha == 0.f) a.fail("alpha", "nonzero (celu divides by it)");
  return pointwise(
      "celu", a.value("x"), [alpha](float x) { return std::max(x, 0.f) + alpha * std::expm1(std::min(x, 0.f) / alpha); },
      [alpha](float x, float) { return x > 0.f ? 1.f : std::exp(x / alpha); });
}
Tensor tanh_shrink(const Args<Tensor>& a) {
  return pointwise(
      "tanh_shrink", a.value("x"), [](float x) { return x - std::tanh(x); },
      [](float x, float) { return std::tanh(x) * std::tanh(x); });
}
Tensor hard_tanh(const Args<Tensor>& a) {  // clip_by_value(x, -1, 1)
  return pointwise(
      "hard_tanh", a.value("x"), [](float x) { return std::min(std::max(x, -1.f), 1.f); },
      [](float x, float) { return x >= -1.f && x <= 1.f ? 1.f : 0.f; });
}
Tensor hard_shrink(const Args<Tensor>& a) {
  const float t = a.get("threshold", 0.5f);
  return pointwise(
      "hard_shrink", a.value("x"), [t](float x) { return std::fabs(x) > t ? x : 0.f; },
      [t](float x, float) { return std::fabs(x) > t ? 1.f : 0.f; });
}
Tensor threshold(const Args<Tensor>& a) {
  const float t = a.get("threshold", 0.f), v = a.get("default_value", 0.f);
  if (!a.has("threshold")) a.fail("threshold", "given");
  if (!a.has("default_value")) a.fail("default_value", "given");
  return pointwise(
      "threshold", a.value("x"), [t, v](float x) { return x > t ? x : v; }, [t](float x, float) { return x > t ? 1.f : 0.f; });
}

// An axis argument that is one int, normalised against `rank` (ValueError naming the op otherwise).
template <class T>
int one_axis(const Args<T>& a, const char* name, int rank, int fallback) {
  const Json& j = a.json(name);
  if (!j.is_null() && !j.is_number_integer()) a.fail(name, "one int");
  const int ax = j.is_null() ? fallback : j.get<int>();
  if (ax < -rank || ax >= rank) a.fail(name, "in range for a tensor of rank " + std::to_string(rank));
  return ax < 0 ? ax + rank : ax;
}

// glu(x, axis): the first half along the axis times the sigmoid of the second.
Shape glu_shape(const Args<Shape>& a) {
  Shape s = a.value("x");
  const int ax = one_axis(a, "axis", static_cast<int>(s.size()), -1);
  if (s[ax] >= 0 && s[ax] % 2 != 0) a.fail("axis", "an axis whose size is divisible by 2 (it is " + std::to_string(s[ax]) + ")");
  if (s[ax] >= 0) s[ax] /= 2;
  return s;
}
Tensor glu(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const int ax = one_axis(a, "axis", x.rank(), -1);
  if (x.dim(ax) % 2 != 0) a.fail("axis", "an axis whose size is divisible by 2 (it is " + std::to_string(x.dim(ax)) + ")");
  std::vector<int64_t> begin(x.rank(), 0), size = x.shape();
  size[ax] /= 2;
  const Tensor x1 = ops::slice(x, begin, size);
  begin[ax] = size[ax];
  return ops::binary(BinaryOp::multiply, x1, ops::unary(UnaryOp::sigmoid, ops::slice(x, begin, size)));
}

// sparsemax as Keras computes it (every backend): z sorted descending, c its cumulative sums, the
// support j with z_j - (c_j - 1) / (j + 1) > 0 (k of them), tau = (sum of c_j over the support - 1) / k,
// y = max(x - tau, 0). (The sum of c_j, not c_{k-1}, is Keras's formula; kerascpp computes what Keras does.)
// The gradient: dtau/dz_(i) = (support positions j >= i) / k for the i-th largest.
struct SparsemaxSlice {
  std::vector<int64_t> order;  // positions by value, descending
  std::vector<float> w;        // dtau/dz for each sorted position
  float tau = 0.f;
};
SparsemaxSlice sparsemax_slice(const float* x, int64_t n, int64_t stride) {
  SparsemaxSlice s;
  s.order.resize(n);
  std::iota(s.order.begin(), s.order.end(), 0);
  std::stable_sort(s.order.begin(), s.order.end(), [&](int64_t p, int64_t q) { return x[p * stride] > x[q * stride]; });
  std::vector<char> support(n);
  float c = 0.f, total = 0.f, k = 0.f;
  for (int64_t j = 0; j < n; ++j) {
    const float z = x[s.order[j] * stride];
    c += z;
    support[j] = z - (c - 1.f) / static_cast<float>(j + 1) > 0.f;
    if (support[j]) total += c, k += 1.f;
  }
  s.tau = (total - 1.f) / k;
  s.w.assign(n, 0.f);
  float after = 0.f;
  for (int64_t j = n - 1; j >= 0; --j) {
    after += support[j] ? 1.f : 0.f;
    s.w[j] = after / k;
  }
  return s;
}
Tensor sparsemax(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (x.rank() == 0) a.fail("x", "of rank >= 1");
  const int ax = one_axis(a, "axis", x.rank(), -1);
  const ops::detail::AxisSplit sp = ops::detail::split_axis(x.shape(), ax);
  Tensor y = Tensor::empty(x.shape());
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      const int64_t base = o * sp.axis * sp.inner + i;
      const float tau = sparsemax_slice(x.data<float>() + base, sp.axis, sp.inner).tau;
      for (int64_t k = 0; k < sp.axis; ++k)
        y.data<float>()[base + k * sp.inner] = std::max(x.data<float>()[base + k * sp.inner] - tau, 0.f);
    }
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("sparsemax", {x}, y, [x, y, sp](const Tensor& dy) {
      Tensor dx = Tensor::zeros(x.shape());
      for (int64_t o = 0; o < sp.outer; ++o)
        for (int64_t i = 0; i < sp.inner; ++i) {
          const int64_t base = o * sp.axis * sp.inner + i;
          const SparsemaxSlice s = sparsemax_slice(x.data<float>() + base, sp.axis, sp.inner);
          float g = 0.f;  // dy summed over the positive outputs: d(sum)/dtau
          for (int64_t k = 0; k < sp.axis; ++k) {
            const int64_t at = base + k * sp.inner;
            if (y.data<float>()[at] > 0.f) dx.data<float>()[at] = dy.data<float>()[at], g += dy.data<float>()[at];
          }
          for (int64_t j = 0; j < sp.axis; ++j) dx.data<float>()[base + s.order[j] * sp.inner] -= s.w[j] * g;
        }
      return ops::Grads{dx};
    });
  return y;
}

// ---- one_hot / multi_hot: integer indices (carried as float32, truncated as Keras's int64 cast)
struct OneHotSpec {
  int64_t depth;
  int axis;  // where the new dim goes, in [0, rank]
};
template <class T>
OneHotSpec one_hot_spec(const Args<T>& a, int rank, const char* depth_name) {
  if (!a.has(depth_name)) a.fail(depth_name, "given");
  const int64_t depth = a.get(depth_name, int64_t{0});
  if (depth < 0) a.fail(depth_name, "a count >= 0");
  const int ax = a.get("axis", -1);
  if (ax < -1 || ax > rank) a.fail("axis", "-1 or in [0, " + std::to_string(rank) + "]");
  if (a.get("sparse", false)) a.fail("sparse", "supported by kerascpp (only dense results)");
  return {depth, ax == -1 ? rank : ax};
}
Tensor one_hot_of(const Tensor& x, const OneHotSpec& s, float on, float off) {
  Shape out = x.shape();
  out.insert(out.begin() + s.axis, s.depth);
  const ops::detail::AxisSplit sp = ops::detail::split_axis(out, s.axis);  // x is (outer, inner)
  Tensor y = Tensor::empty(out);
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      const float v = x.data<float>()[o * sp.inner + i];
      const int64_t hot = std::isfinite(v) ? static_cast<int64_t>(std::trunc(v)) : -1;
      for (int64_t k = 0; k < sp.axis; ++k) y.data<float>()[(o * sp.axis + k) * sp.inner + i] = k == hot ? on : off;
    }
  return y;
}
// The dtype argument applied to the on / off values (0 / 1 unless tf.one_hot gives others), as
// Keras's tensor holds them.
Tensor as_dtype(const Args<Tensor>& a, const Tensor& y) { return a.has("dtype") ? cast_to(a, y, "dtype") : y; }
Shape one_hot_shape(const Args<Shape>& a) {
  Shape s = a.value("x");
  const OneHotSpec spec = one_hot_spec(a, static_cast<int>(s.size()), "num_classes");
  s.insert(s.begin() + spec.axis, spec.depth);
  return s;
}
Tensor one_hot(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  Tensor y = one_hot_of(x, one_hot_spec(a, x.rank(), "num_classes"), 1.f, 0.f);
  return as_dtype(a, y);
}
// tf.one_hot(indices, depth, on_value=1, off_value=0, axis=-1, dtype).
Shape tf_one_hot_shape(const Args<Shape>& a) {
  Shape s = a.value("indices");
  const OneHotSpec spec = one_hot_spec(a, static_cast<int>(s.size()), "depth");
  s.insert(s.begin() + spec.axis, spec.depth);
  return s;
}
Tensor tf_one_hot(const Args<Tensor>& a) {
  const Tensor x = a.value("indices");
  Tensor y = one_hot_of(x, one_hot_spec(a, x.rank(), "depth"), a.get("on_value", 1.f), a.get("off_value", 0.f));
  return as_dtype(a, y);
}
// multi_hot: one_hot, then the max over axis 1 (axis 0 for a vector), as the TensorFlow backend does.
Shape multi_hot_shape(const Args<Shape>& a) {
  Shape s = one_hot_shape(a);
  s.erase(s.begin() + (s.size() > 2 ? 1 : 0));
  return s;
}
Tensor multi_hot(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const Tensor y = one_hot_of(x, one_hot_spec(a, x.rank(), "num_classes"), 1.f, 0.f);
  Tensor m = ops::reduce_max(y, {x.rank() > 1 ? 1 : 0}, false).copy();  // fresh bytes: no gradient
  return as_dtype(a, m);
}

// ---- moments(x, axes, keepdims, synchronized): tf.nn.moments, mean and the variance about the
// mean (its gradient through the mean stopped, which changes nothing: the deviations sum to 0).
// synchronized: sum / count and max(E[x^2] - mean^2, 0), the TensorFlow backend's replica path (with
// no distribution strategy, the default replica context).
template <class T>
std::vector<int> moment_axes(const Args<T>& a, int rank) {
  if (!a.has("axes")) a.fail("axes", "given");
  std::vector<int> out;
  for (int ax : a.axes("axes")) {
    if (ax < -rank || ax >= rank) a.fail("axes", "in range for a tensor of rank " + std::to_string(rank));
    out.push_back(ax < 0 ? ax + rank : ax);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) a.fail("axes", "free of repeats");
  return out;
}
Shape kept_shape(const Shape& s, const std::vector<int>& axes, bool keepdims) {
  Shape out;
  for (size_t d = 0; d < s.size(); ++d) {
    const bool r = std::binary_search(axes.begin(), axes.end(), static_cast<int>(d));
    if (!r) out.push_back(s[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}
std::vector<Shape> moments_shapes(const Args<Shape>& a) {
  const Shape x = a.value("x");
  const Shape s = kept_shape(x, moment_axes(a, static_cast<int>(x.size())), a.get("keepdims", false));
  return {s, s};
}
std::vector<Tensor> moments(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const std::vector<int> axes = moment_axes(a, x.rank());
  const Tensor mean = ops::reduce_mean(x, axes, true);
  Tensor var;
  if (a.get("synchronized", false)) {
    const Tensor sq = ops::reduce_mean(ops::unary(UnaryOp::square, x), axes, true);
    var = ops::binary(BinaryOp::maximum, ops::binary(BinaryOp::subtract, sq, ops::unary(UnaryOp::square, mean)),
                      ops::detail::scalar(0.f));
  } else {
    const Tensor d = ops::binary(BinaryOp::subtract, x, mean.copy());  // stop_gradient(mean)
    var = ops::reduce_mean(ops::unary(UnaryOp::square, d), axes, true);
  }
  const Shape s = kept_shape(x.shape(), axes, a.get("keepdims", false));
  return {mean.reshape(s), var.reshape(s)};
}

// ---- batch_normalization(x, mean, variance, offset, scale; axis, epsilon): tf.nn.batch_normalization,
// the statistics (C,) reshaped onto `axis` (axis=-1: any shape that broadcasts against x).
Tensor on_axis(const Tensor& t, int axis, int rank) {
  Shape s(rank, 1);
  s[axis] = t.size();
  return t.reshape(s);
}
Tensor batch_norm(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (!a.has("axis")) a.fail("axis", "given");
  const int ax = one_axis(a, "axis", x.rank(), -1);
  const float eps = a.get("epsilon", 1e-3f);
  Tensor mean = a.value("mean"), var = a.value("variance");
  Tensor offset = a.has("offset") ? a.value("offset") : Tensor(), scale = a.has("scale") ? a.value("scale") : Tensor();
  const int64_t c = x.dim(ax);
  auto per_channel = [&](const Tensor& t) { return !t.defined() || t.shape() == Shape{c}; };
  if (per_channel(mean) && per_channel(var) && per_channel(offset) && per_channel(scale))
    return ops::batch_normalization(x, mean, var, offset, scale, ax, eps);
  const bool last = ax == x.rank() - 1 && a.json("axis") == -1;
  for (auto [t, name] : {std::pair{&mean, "mean"}, std::pair{&var, "variance"}, std::pair{&offset, "offset"},
                         std::pair{&scale, "scale"}}) {
    if (!t->defined() || last) continue;
    if (t->rank() != 1) a.fail(name, "of shape (" + std::to_string(c) + ",) for axis " + a.json("axis").dump());
    *t = on_axis(*t, ax, x.rank());
  }
  // inv = rsqrt(variance + epsilon) * scale; y = x * inv + (offset - mean * inv)
  Tensor inv = ops::binary(BinaryOp::divide, ops::detail::scalar(1.f), ops::unary(UnaryOp::sqrt, ops::scale_shift(var, 1.f, eps)));
  if (scale.defined()) inv = ops::binary(BinaryOp::multiply, inv, scale);
  Tensor shift = ops::scale_shift(ops::binary(BinaryOp::multiply, mean, inv), -1.f, 0.f);
  if (offset.defined()) shift = ops::binary(BinaryOp::add, offset, ops::binary(BinaryOp::multiply, ops::scale_shift(mean, -1.f, 0.f), inv));
  return ops::binary(BinaryOp::add, ops::binary(BinaryOp::multiply, x, inv), shift);
}
Shape batch_norm_shape(const Args<Shape>& a) {
  Shape s = a.value("x");  // statistics of rank 1 go onto the axis; others broadcast
  for (const char* name : {"mean", "variance", "offset", "scale"})
    if (a.has(name) && a.value(name).size() != 1) s = ops::broadcast_shape(s, a.value(name));
  return s;
}

// Normalised, sorted axes of a LayerNorm / RMSNorm (an int or a list).
template <class T>
std::vector<int> norm_axes(const Args<T>& a, int rank) {
  std::vector<int> out;
  const std::vector<int> given = a.has("axis") ? a.axes("axis") : std::vector<int>{-1};
  for (int ax : given) {
    if (ax < -rank || ax >= rank) a.fail("axis", "in range for a tensor of rank " + std::to_string(rank));
    out.push_back(ax < 0 ? ax + rank : ax);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// rms_normalization(x, scale; axis, epsilon=1e-7): x * rsqrt(mean(x^2 over axis) + epsilon) * scale.
Tensor rms_norm(const Args<Tensor>& a) {
  Tensor x = a.value("x");
  const Shape shape = x.shape();
  if (x.rank() == 0) x = x.reshape({1});
  const std::vector<int> axes = norm_axes(a, x.rank());
  const Tensor ms = ops::scale_shift(ops::reduce_mean(ops::unary(UnaryOp::square, x), axes, true), 1.f, a.get("epsilon", 1e-7f));
  Tensor y = ops::binary(BinaryOp::divide, x, ops::unary(UnaryOp::sqrt, ms));
  if (a.has("scale")) y = ops::binary(BinaryOp::multiply, y, a.value("scale"));
  if (y.shape() != shape && shape_size(shape) == y.size()) y = y.reshape(shape);
  return y;
}
Shape rms_norm_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  norm_axes(a, std::max<int>(1, static_cast<int>(x.size())));
  return a.has("scale") ? ops::broadcast_shape(x, a.value("scale")) : x;
}

// layer_normalization(x, gamma, beta; axis, epsilon=1e-7, rms_scaling): the moments over the axes;
// gamma / beta of the axes' dims (reshaped onto them when of another rank) go into the fused op, any
// other broadcastable shape is applied after it. rms_scaling is Keras's deprecated flag: x divided by
// the (centred) standard deviation, times gamma, no beta.
Tensor layer_norm(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const std::vector<int> axes = norm_axes(a, x.rank());
  const float eps = a.get("epsilon", 1e-7f);
  const bool rms = a.get("rms_scaling", false);
  Shape bshape(x.rank(), 1);
  int64_t n = 1;
  for (int ax : axes) bshape[ax] = x.dim(ax), n *= x.dim(ax);
  const bool only_last = axes == std::vector<int>{x.rank() - 1};
  auto prepared = [&](const char* name) {
    if (!a.has(name) || (rms && std::string(name) == "beta")) return Tensor();
    Tensor t = a.value(name);
    if (t.rank() != x.rank() && !only_last) {
      if (t.size() != n) a.fail(name, "of the normalised axes' size " + std::to_string(n));
      t = t.reshape(bshape);
    }
    return t;
  };
  const Tensor gamma = prepared("gamma"), beta = prepared("beta");
  auto fits = [&](const Tensor& t) {  // its dims, aligned to x's, are bshape's
    if (!t.defined()) return true;
    if (t.size() != n || t.rank() > x.rank()) return false;
    const Shape al = ops::broadcast_shape(t.shape(), bshape);
    return al == bshape;
  };
  if (fits(gamma) && fits(beta))
    return ops::layer_normalization(x, gamma.defined() ? gamma.reshape({n}) : Tensor(), beta.defined() ? beta.reshape({n}) : Tensor(),
                                    axes, eps, rms);
  Tensor y = ops::layer_normalization(x, Tensor(), Tensor(), axes, eps, rms);
  if (gamma.defined()) y = ops::binary(BinaryOp::multiply, y, gamma);
  if (beta.defined()) y = ops::binary(BinaryOp::add, y, beta);
  return y;
}
Shape layer_norm_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  norm_axes(a, static_cast<int>(x.size()));
  return x;
}

// psnr(x1, x2; max_val) = 20 log10(max_val) - 10 log10(mean((x1 - x2)^2)) over every element: a scalar.
Shape psnr_shape(const Args<Shape>& a) {
  const Shape x1 = a.value("x1"), x2 = a.value("x2");
  if (x1 != x2) a.fail("x2", "of x1's shape " + shape_str(x1) + " (got " + shape_str(x2) + ")");
  return {};
}
Tensor psnr(const Args<Tensor>& a) {
  const Tensor x1 = a.value("x1"), x2 = a.value("x2");
  if (x1.shape() != x2.shape()) a.fail("x2", "of x1's shape " + shape_str(x1.shape()) + " (got " + shape_str(x2.shape()) + ")");
  if (!a.has("max_val")) a.fail("max_val", "given");
  const float max_val = a.get("max_val", 1.f);
  std::vector<int> all(x1.rank());
  std::iota(all.begin(), all.end(), 0);
  const Tensor d = ops::binary(BinaryOp::subtract, x1, x2);
  const Tensor mse = ops::reduce_mean(ops::unary(UnaryOp::square, d), all, false);
  const float ln10 = std::log(10.f);
  const float head = 20.f * (std::log(max_val) / ln10);
  return ops::scale_shift(ops::unary(UnaryOp::log, mse), -10.f / ln10, head);
}

// ---- depth_to_space / space_to_depth: 4D, NHWC as tf.nn; channels_first through transposes.
template <class T>
int64_t block_of(const Args<T>& a) {
  if (!a.has("block_size")) a.fail("block_size", "given");
  const int64_t b = a.get("block_size", int64_t{0});
  if (b < 2) a.fail("block_size", "an int >= 2");
  return b;
}
template <bool to_space>
Shape block_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  if (x.size() != 4) a.fail("x", "a 4D tensor (it has shape " + shape_str(x) + ")");
  const int64_t b = block_of(a);
  const bool cf = channels_first(a);
  const int h = cf ? 2 : 1, w = cf ? 3 : 2, c = cf ? 1 : 3;
  auto mul = [](int64_t d, int64_t f) { return d < 0 ? d : d * f; };
  auto div = [&](int64_t d, int64_t f, const char* what) {
    if (d >= 0 && d % f != 0) a.fail("block_size", std::string("a divisor of the ") + what + " (" + std::to_string(d) + ")");
    return d < 0 ? d : d / f;
  };
  Shape out = x;
  if (to_space) {
    out[c] = div(x[c], b * b, "depth");
    out[h] = mul(x[h], b), out[w] = mul(x[w], b);
  } else {
    out[h] = div(x[h], b, "height"), out[w] = div(x[w], b, "width");
    out[c] = mul(x[c], b * b);
  }
  return out;
}
template <bool to_space>
Tensor block_move(const Args<Tensor>& a) {
  Tensor x = a.value("x");
  const int64_t b = block_of(a);
  const bool cf = channels_first(a);
  if (x.rank() != 4) a.fail("x", "a 4D tensor (it has shape " + shape_str(x.shape()) + ")");
  if (cf) x = ops::transpose(x, {0, 2, 3, 1});
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  Tensor y;
  if (to_space) {  // (n, h, w, b, b, c / b^2) -> (n, h, b, w, b, c / b^2)
    if (c % (b * b) != 0) a.fail("block_size", "a block whose square divides the depth (" + std::to_string(c) + ")");
    y = ops::transpose(x.reshape({n, h, w, b, b, c / (b * b)}), {0, 1, 3, 2, 4, 5}).reshape({n, h * b, w * b, c / (b * b)});
  } else {  // (n, h / b, b, w / b, b, c) -> (n, h / b, w / b, b, b, c)
    if (h % b != 0 || w % b != 0) a.fail("block_size", "a divisor of the height and width (" + shape_str(x.shape()) + ")");
    y = ops::transpose(x.reshape({n, h / b, b, w / b, b, c}), {0, 1, 3, 2, 4, 5}).reshape({n, h / b, w / b, c * b * b});
  }
  return cf ? ops::transpose(y, {0, 3, 1, 2}) : y;
}

}  // namespace

std::vector<OpDef> nn_ops() {
  std::vector<OpDef> defs = {
      OpDef{"ops.nn.SparseSigmoid", nullptr, {"x"}, {}, same_shape, sparse_sigmoid},
      OpDef{"ops.nn.SoftShrink", nullptr, {"x", "threshold"}, {}, same_shape, soft_shrink},
      OpDef{"ops.nn.SparsePlus", nullptr, {"x"}, {}, same_shape, sparse_plus},
      OpDef{"ops.nn.Squareplus", nullptr, {"x", "b"}, {}, same_shape, squareplus},
      OpDef{"ops.nn.Celu", nullptr, {"x", "alpha"}, {}, same_shape, celu},
      OpDef{"ops.nn.Glu", nullptr, {"x", "axis"}, {}, glu_shape, glu},
      OpDef{"ops.nn.TanhShrink", nullptr, {"x"}, {}, same_shape, tanh_shrink},
      OpDef{"ops.nn.HardTanh", nullptr, {"x"}, {}, same_shape, hard_tanh},
      OpDef{"ops.nn.HardShrink", nullptr, {"x", "threshold"}, {}, same_shape, hard_shrink},
      OpDef{"ops.nn.Threshold", nullptr, {"x", "threshold", "default_value"}, {}, same_shape, threshold},
      OpDef{"ops.nn.Sparsemax", nullptr, {"x", "axis"}, {}, same_shape, sparsemax},
      OpDef{"ops.nn.OneHot", nullptr, {"x", "num_classes", "axis", "dtype", "sparse"}, {}, one_hot_shape, one_hot},
      OpDef{"ops.nn.MultiHot", nullptr, {"x", "num_classes", "axis", "dtype", "sparse"}, {}, multi_hot_shape, multi_hot},
      OpDef{nullptr, "one_hot", {"indices", "depth", "on_value", "off_value", "axis", "dtype"}, {}, tf_one_hot_shape, tf_one_hot},
      OpDef{"ops.nn.Moments", nullptr, {"x", "axes", "keepdims", "synchronized"}, {}, nullptr, nullptr, moments_shapes, moments},
      OpDef{"ops.nn.BatchNorm", nullptr, {"x", "mean", "variance", "offset", "scale", "axis", "epsilon"}, {}, batch_norm_shape,
            batch_norm},
      OpDef{"ops.nn.RMSNorm", nullptr, {"x", "scale", "axis", "epsilon"}, {}, rms_norm_shape, rms_norm},
      OpDef{"ops.nn.LayerNorm", nullptr, {"x", "gamma", "beta", "axis", "epsilon", "rms_scaling"}, {}, layer_norm_shape, layer_norm},
      OpDef{"ops.nn.PSNR", nullptr, {"x1", "x2", "max_val"}, {}, psnr_shape, psnr},
      OpDef{"ops.nn.DepthToSpace", "nn.depth_to_space", {"x", "block_size", "data_format"}, {{"input", "x"}}, block_shape<true>,
            block_move<true>},
      OpDef{"ops.nn.SpaceToDepth", "nn.space_to_depth", {"x", "block_size", "data_format"}, {{"input", "x"}}, block_shape<false>,
            block_move<false>},
  };
  for (OpDef& d : nn_ops_losses()) defs.push_back(std::move(d));
  return defs;
}

}  // namespace kerascpp::layers::op_nodes
