// Padding and correlation op nodes: keras.ops.pad / tf.pad (modes constant, reflect and symmetric, the
// ones Keras's TensorFlow backend passes to tf.pad; tf_keras records tf.pad as compat.v1.pad, e.g.
// inside tf.image.sobel_edges), keras.ops.corrcoef and keras.ops.correlate as that backend computes them.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "layers/op_nodes/op_node.h"
#include "ops/grad_util.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
namespace {

using Pads = std::vector<std::pair<int64_t, int64_t>>;

// ---- pad. Keras's TensorFlow backend calls tf.pad(x, pad_width, mode.upper()); tf.pad knows CONSTANT,
// REFLECT and SYMMETRIC in any case, nothing else (numpy's edge / wrap / maximum / ... raise there).
enum class PadMode { constant, reflect, symmetric };

template <class T>
PadMode mode_of(const Args<T>& a) {
  std::string m = a.template get<std::string>("mode", "constant");
  for (char& c : m) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  PadMode mode;
  if (m == "CONSTANT") {
    mode = PadMode::constant;
  } else if (m == "REFLECT") {
    mode = PadMode::reflect;
  } else if (m == "SYMMETRIC") {
    mode = PadMode::symmetric;
  } else {
    a.fail("mode", "not one of constant, reflect or symmetric (the only modes of tf.pad, which Keras's TensorFlow backend pads with)");
  }
  // Keras 3 refuses constant_values unless mode is exactly "constant"; tf.pad ignores them for mirroring.
  if (a.keras3() && a.has("constant_values") && a.template get<std::string>("mode", "constant") != "constant")
    a.fail("constant_values", "given with a mode other than 'constant', which Keras refuses");
  return mode;
}

// One (before, after) pair per axis of x (as tf.pad: Keras's ((p, p),) for every axis does not run in
// its TensorFlow backend either), non-negative; mirrored pads within the axis (REFLECT: < its size, as
// the edge is not repeated; SYMMETRIC: <= its size). Unknown dims (-1) are checked when the op runs.
template <class T>
Pads pads_of(const Args<T>& a, const Shape& x, PadMode mode) {
  const auto p = a.template get<std::vector<std::vector<int64_t>>>("pad_width", {});
  if (p.size() != x.size()) a.fail("pad_width", "one (before, after) pair per axis of x (rank " + std::to_string(x.size()) + ")");
  Pads out;
  for (size_t d = 0; d < p.size(); ++d) {
    if (p[d].size() != 2) a.fail("pad_width", "one (before, after) pair per axis of x");
    if (p[d][0] < 0 || p[d][1] < 0) a.fail("pad_width", "non-negative");
    const int64_t limit = mode == PadMode::reflect ? x[d] - 1 : x[d];
    if (mode != PadMode::constant && x[d] >= 0 && std::max(p[d][0], p[d][1]) > limit)
      a.fail("pad_width", std::string("too wide for mode ") + (mode == PadMode::reflect ? "reflect (pads must be less than" : "symmetric (pads must be at most") +
                              " the axis's size; axis " + std::to_string(d) + " has " + std::to_string(x[d]) + ")");
    out.emplace_back(p[d][0], p[d][1]);
  }
  return out;
}

Shape pad_shape(const Args<Shape>& a) {
  Shape x = a.value("x");
  const PadMode mode = mode_of(a);
  const Pads p = pads_of(a, x, mode);
  if (mode == PadMode::constant && a.has("constant_values") && !a.value("constant_values").empty())
    a.fail("constant_values", "not a scalar");
  for (size_t d = 0; d < x.size(); ++d) x[d] = x[d] < 0 ? -1 : x[d] + p[d].first + p[d].second;
  return x;
}

// tf.raw_ops.MirrorPad: every output element a copy of one input element (REFLECT: index -i before the
// axis, 2 (n - 1) - i after it; SYMMETRIC: -i - 1 and 2 n - 1 - i). The gradient adds dy back into the
// element each output copied, so a mirrored source gets the gradients of all of its copies.
Tensor mirror_pad(const Tensor& x, const Pads& p, bool reflect) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  std::vector<int64_t> stride(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * x.dim(d + 1);
  std::vector<int64_t> src{0};  // the flat input offset each output element copies
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t n = x.dim(d), m = n + p[d].first + p[d].second;
    out.push_back(m);
    std::vector<int64_t> next;
    next.reserve(src.size() * m);
    for (int64_t s : src) {
      for (int64_t o = 0; o < m; ++o) {
        int64_t i = o - p[d].first;
        if (i < 0) i = reflect ? -i : -i - 1;
        else if (i >= n) i = reflect ? 2 * (n - 1) - i : 2 * n - 1 - i;
        next.push_back(s + i * stride[d]);
      }
    }
    src = std::move(next);
  }
  Tensor y = Tensor::empty(out);
  const float* xv = x.data<float>();
  float* yv = y.data<float>();
  for (size_t k = 0; k < src.size(); ++k) yv[k] = xv[src[k]];
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record(reflect ? "mirror_pad_reflect" : "mirror_pad_symmetric", {x}, y, [src = std::move(src), shape = x.shape()](const Tensor& dy) {
      Tensor dx = Tensor::zeros(shape);
      const float* g = dy.data<float>();
      float* d = dx.data<float>();
      for (size_t k = 0; k < src.size(); ++k) d[src[k]] += g[k];
      return ops::Grads{dx};
    });
  return y;
}

Tensor pad(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const PadMode mode = mode_of(a);
  const Pads p = pads_of(a, x.shape(), mode);
  if (mode != PadMode::constant) {
    KCPP_CHECK(x.dtype() == DType::float32, ValueError, a.who(), ": mirrored padding takes float32 tensors. Received: dtype=",
               dtype_name(x.dtype()));
    return mirror_pad(x, p, mode == PadMode::reflect);
  }
  if (!a.has("constant_values")) return ops::pad(x, p, 0.f);
  const Json& c = a.json("constant_values");
  if (c.is_number()) return ops::pad(x, p, c.get<float>());
  // A tensor (rank 0): pad(x, 0) + c * pad(0, 1), so that c gets its gradient too.
  const Tensor v = a.value("constant_values");
  if (v.rank() != 0) a.fail("constant_values", "not a scalar");
  const Tensor frame = ops::pad(Tensor::zeros(x.shape()), p, 1.f);
  return ops::binary(ops::BinaryOp::add, ops::pad(x, p, 0.f), ops::binary(ops::BinaryOp::multiply, frame, v));
}

// ---- corrcoef(x): rows are variables, columns observations. Keras's TensorFlow backend: x centred on
// its row means, cov = xc xc^T / (n - 1), divided by the outer product of sqrt(diag(cov)), clipped to
// [-1, 1]; rank 0 gives NaN; rank 1 fails there (tf.matmul of a vector) and higher ranks give a
// broadcast of no use, so kerascpp takes rank 2 (and 0).
Shape corrcoef_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  if (x.empty()) return {};
  if (x.size() != 2) a.fail("x", "not of rank 2 (rows the variables, columns the observations), as Keras's TensorFlow backend needs");
  return {x[0], x[0]};
}
Tensor corrcoef(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (x.rank() == 0) return ops::detail::scalar(std::numeric_limits<float>::quiet_NaN());
  if (x.rank() != 2) a.fail("x", "not of rank 2 (rows the variables, columns the observations), as Keras's TensorFlow backend needs");
  using ops::BinaryOp;
  const Tensor n1 = ops::detail::scalar(static_cast<float>(x.dim(1) - 1));
  const Tensor xc = ops::binary(BinaryOp::subtract, x, ops::reduce_mean(x, {-1}, true));
  const Tensor cov = ops::binary(BinaryOp::divide, ops::matmul(xc, ops::transpose(xc, {1, 0})), n1);
  // sqrt of cov's diagonal: the rows' sums of squares over n - 1, as a column (rows, 1).
  const Tensor sd = ops::unary(ops::UnaryOp::sqrt, ops::binary(BinaryOp::divide, ops::sum(ops::unary(ops::UnaryOp::square, xc), 1, true), n1));
  const Tensor corr = ops::binary(BinaryOp::divide, cov, ops::binary(BinaryOp::multiply, sd, ops::transpose(sd, {1, 0})));
  return ops::binary(BinaryOp::minimum, ops::binary(BinaryOp::maximum, corr, ops::detail::scalar(-1.f)), ops::detail::scalar(1.f));
}

// ---- correlate(x1, x2, mode): numpy.correlate of two 1-D tensors, y[k] = sum_j x1[k + o + j] x2[j]
// (x1 zero outside its length): valid o = 0 (length n - m + 1; Keras's TensorFlow backend fails for
// m > n), full o = -(m - 1) (length n + m - 1), same the middle max(n, m) of full.
enum class CorrMode { valid, same, full };
template <class T>
CorrMode corr_mode(const Args<T>& a) {
  const std::string m = a.template get<std::string>("mode", "valid");
  if (m == "valid") return CorrMode::valid;
  if (m == "same") return CorrMode::same;
  if (m == "full") return CorrMode::full;
  a.fail("mode", "not one of 'valid', 'same' or 'full'");
}
// The output's length and the offset o, for lengths n, m known (>= 1).
std::pair<int64_t, int64_t> corr_window(CorrMode mode, int64_t n, int64_t m) {
  if (mode == CorrMode::valid) return {n - m + 1, 0};
  if (mode == CorrMode::full) return {n + m - 1, -(m - 1)};
  return {std::max(n, m), (std::min(n, m) - 1) / 2 - (m - 1)};
}
Shape correlate_shape(const Args<Shape>& a) {
  const Shape x1 = a.value("x1"), x2 = a.value("x2");
  const CorrMode mode = corr_mode(a);
  if (x1.size() != 1) a.fail("x1", "not a 1-dimensional tensor");
  if (x2.size() != 1) a.fail("x2", "not a 1-dimensional tensor");
  const int64_t n = x1[0], m = x2[0];
  if (n == 0) a.fail("x1", "not empty");
  if (m == 0) a.fail("x2", "not empty");
  if (n < 0 || m < 0) return {-1};
  if (mode == CorrMode::valid && m > n)
    a.fail("x2", "longer than x1 (" + std::to_string(m) + " > " + std::to_string(n) + ") with mode 'valid', where Keras's TensorFlow backend fails");
  return {corr_window(mode, n, m).first};
}
Tensor correlate(const Args<Tensor>& a) {
  const Tensor x1 = a.value("x1"), x2 = a.value("x2");
  const CorrMode mode = corr_mode(a);
  if (x1.rank() != 1) a.fail("x1", "not a 1-dimensional tensor");
  if (x2.rank() != 1) a.fail("x2", "not a 1-dimensional tensor");
  const int64_t n = x1.dim(0), m = x2.dim(0);
  if (n == 0) a.fail("x1", "not empty");
  if (m == 0) a.fail("x2", "not empty");
  if (mode == CorrMode::valid && m > n)
    a.fail("x2", "longer than x1 (" + std::to_string(m) + " > " + std::to_string(n) + ") with mode 'valid', where Keras's TensorFlow backend fails");
  const auto window = corr_window(mode, n, m);
  const int64_t len = window.first, o = window.second;  // captured below: no structured binding (clang < 16)
  Tensor y = Tensor::empty({len});
  const float *u = x1.data<float>(), *v = x2.data<float>();
  for (int64_t k = 0; k < len; ++k) {
    float acc = 0.f;
    for (int64_t j = std::max<int64_t>(0, -(k + o)); j < m && k + o + j < n; ++j) acc += u[k + o + j] * v[j];
    y.data<float>()[k] = acc;
  }
  if (ops::Recorder* r = ops::tape_for({&x1, &x2}))
    r->record("correlate", {x1, x2}, y, [x1, x2, n, m, len, o](const Tensor& dy) {
      Tensor d1 = Tensor::zeros({n}), d2 = Tensor::zeros({m});
      const float *g = dy.data<float>(), *u = x1.data<float>(), *v = x2.data<float>();
      for (int64_t k = 0; k < len; ++k)
        for (int64_t j = std::max<int64_t>(0, -(k + o)); j < m && k + o + j < n; ++j) {
          d1.data<float>()[k + o + j] += g[k] * v[j];
          d2.data<float>()[j] += g[k] * u[k + o + j];
        }
      return ops::Grads{d1, d2};
    });
  return y;
}

}  // namespace

std::vector<OpDef> padding_ops() {
  return {
      OpDef{"ops.numpy.Pad", "pad|compat.v1.pad", {"x", "pad_width", "mode", "constant_values"},
            {{"tensor", "x"}, {"paddings", "pad_width"}}, pad_shape, pad},
      OpDef{"ops.numpy.Corrcoef", nullptr, {"x"}, {}, corrcoef_shape, corrcoef},
      OpDef{"ops.numpy.Correlate", nullptr, {"x1", "x2", "mode"}, {}, correlate_shape, correlate},
  };
}

}  // namespace kerascpp::layers::op_nodes
