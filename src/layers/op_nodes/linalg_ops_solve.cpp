// Linear algebra op nodes, matrix functions: keras.ops.linalg det / inv / solve / solve_triangular /
// cholesky / cholesky_inverse / norm, keras.ops logdet / slogdet, and tf.linalg's det, inv, solve,
// triangular_solve, cholesky, norm. Over the last two dims, every leading dim a batch; computed in
// double precision (LU with partial pivoting, Cholesky), with TensorFlow's gradients.
#include <cmath>
#include <limits>
#include <numeric>

#include "layers/op_nodes/op_node.h"
#include "ops/grad_util.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
namespace linalg {

// numpy.moveaxis: the axes `from` moved to `to`, the others in order.
Tensor moveaxes(const Tensor& x, const std::vector<int>& from, const std::vector<int>& to) {
  const int r = x.rank();
  std::vector<int> perm(r, -1), rest;
  std::vector<bool> moved(r, false);
  for (size_t i = 0; i < from.size(); ++i) {
    const int f = ops::normalize_axis(from[i], r), t = ops::normalize_axis(to[i], r);
    perm[t] = f;
    moved[f] = true;
  }
  for (int d = 0; d < r; ++d) if (!moved[d]) rest.push_back(d);
  for (int d = 0, k = 0; d < r; ++d) if (perm[d] < 0) perm[d] = rest[k++];
  bool identity = true;
  for (int d = 0; d < r; ++d) identity = identity && perm[d] == d;
  return identity ? x : ops::transpose(x, perm);
}
Tensor moveaxis(const Tensor& x, int from, int to) { return moveaxes(x, {from}, {to}); }
Tensor swap_last(const Tensor& x) { return moveaxis(x, -1, -2); }
namespace {
float pow_f(float a, float b) { return std::pow(a, b); }
float pow_da(float a, float b, float) { return b == 0.f ? 0.f : b * std::pow(a, b - 1.f); }
float pow_db(float a, float, float y) { return a > 0.f ? y * std::log(a) : 0.f; }
}  // namespace
Tensor power(const Tensor& x, const Tensor& p) { return ops::map_binary("power", x, p, pow_f, pow_da, pow_db); }
std::vector<OpDef> solve_ops();

}  // namespace linalg
namespace {
using linalg::power;
using linalg::swap_last;
using ops::BinaryOp;
using ops::UnaryOp;

// ---- batched matrices in double precision. A tensor (..., m, n) as `count` row-major m x n blocks.
struct Mats {
  int64_t count, m, n;
  std::vector<double> v;
  double* at(int64_t b) { return v.data() + b * m * n; }
  const double* at(int64_t b) const { return v.data() + b * m * n; }
};
Mats mats(const Tensor& t) {
  Mats s{t.size() / std::max<int64_t>(t.dim(-2) * t.dim(-1), 1), t.dim(-2), t.dim(-1), {}};
  s.v.assign(t.data<float>(), t.data<float>() + t.size());
  return s;
}
Tensor tensor(const Mats& s, Shape shape) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(s.v[i]);
  return t;
}
// c = op(a) op(b) per matrix (op: transpose when the flag says so).
Mats mm(const Mats& a, bool ta, const Mats& b, bool tb) {
  const int64_t m = ta ? a.n : a.m, k = ta ? a.m : a.n, n = tb ? b.m : b.n;
  Mats c{a.count, m, n, std::vector<double>(a.count * m * n, 0.0)};
  for (int64_t q = 0; q < a.count; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l)
          s += a.at(q)[ta ? l * a.n + i : i * a.n + l] * b.at(q)[tb ? j * b.n + l : l * b.n + j];
        c.at(q)[i * n + j] = s;
      }
  return c;
}
Mats transposed(const Mats& a) {
  Mats t{a.count, a.n, a.m, std::vector<double>(a.v.size())};
  for (int64_t q = 0; q < a.count; ++q)
    for (int64_t i = 0; i < a.m; ++i)
      for (int64_t j = 0; j < a.n; ++j) t.at(q)[j * a.m + i] = a.at(q)[i * a.n + j];
  return t;
}
// LU with partial pivoting of one n x n matrix in place: the permutation's sign, 0 when singular.
int lu(double* a, int64_t n, std::vector<int64_t>& piv) {
  piv.resize(n);
  int sign = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < n; ++r) if (std::abs(a[r * n + c]) > std::abs(a[p * n + c])) p = r;
    piv[c] = p;
    if (a[p * n + c] == 0.0) return 0;
    if (p != c) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[c * n + j], a[p * n + j]);
      sign = -sign;
    }
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] /= a[c * n + c];
      for (int64_t j = c + 1; j < n; ++j) a[r * n + j] -= f * a[c * n + j];
    }
  }
  return sign;
}
// x = A^-1 b for every matrix (b: n x k blocks), or A^-T b with `transpose`. ValueError when singular.
Mats solve(const Mats& a, const Mats& b, bool transpose, const std::string& who) {
  Mats x = b, f = transpose ? transposed(a) : a;
  std::vector<int64_t> piv;
  const int64_t n = a.n, k = b.n;
  for (int64_t q = 0; q < a.count; ++q) {
    double* l = f.at(q);
    double* y = x.at(q);
    KCPP_CHECK(lu(l, n, piv) != 0, ValueError, who, ": the matrix is not invertible");
    for (int64_t c = 0; c < n; ++c)
      if (piv[c] != c) for (int64_t j = 0; j < k; ++j) std::swap(y[c * k + j], y[piv[c] * k + j]);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < r; ++c) for (int64_t j = 0; j < k; ++j) y[r * k + j] -= l[r * n + c] * y[c * k + j];
    for (int64_t r = n - 1; r >= 0; --r)
      for (int64_t j = 0; j < k; ++j) {
        double s = y[r * k + j];
        for (int64_t c = r + 1; c < n; ++c) s -= l[r * n + c] * y[c * k + j];
        y[r * k + j] = s / l[r * n + r];
      }
  }
  return x;
}
Mats identity(int64_t count, int64_t n) {
  Mats e{count, n, n, std::vector<double>(count * n * n, 0.0)};
  for (int64_t q = 0; q < count; ++q) for (int64_t i = 0; i < n; ++i) e.at(q)[i * n + i] = 1.0;
  return e;
}
// The lower (or upper) triangle of each matrix, the rest zero.
Mats triangle(Mats a, bool lower) {
  for (int64_t q = 0; q < a.count; ++q)
    for (int64_t i = 0; i < a.m; ++i)
      for (int64_t j = 0; j < a.n; ++j) if (lower ? j > i : j < i) a.at(q)[i * a.n + j] = 0.0;
  return a;
}
Mats scaled(Mats a, double s) {
  for (double& v : a.v) v *= s;
  return a;
}
Mats plus(Mats a, const Mats& b) {
  for (size_t i = 0; i < a.v.size(); ++i) a.v[i] += b.v[i];
  return a;
}

template <class T>
void expect_square(const Args<T>& a, const Shape& s, const char* name) {
  if (s.size() < 2 || (s[s.size() - 1] >= 0 && s[s.size() - 1] != s[s.size() - 2]))
    a.fail(name, "a (batch of) square matrices. Its shape is " + shape_str(s));
}
Shape batch_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  expect_square(a, x, "x");
  return Shape(x.begin(), x.end() - 2);
}
Shape square_shape(const Args<Shape>& a) {
  expect_square(a, a.value("x"), "x");
  return a.value("x");
}

// ---- det: LU's diagonal; d det / dA = det * A^-T. slogdet: its sign and log |det|, whose gradient
// is A^-T.
std::pair<std::vector<double>, std::vector<double>> sign_logabs(const Mats& m) {
  Mats f = m;
  std::vector<double> sign(m.count), logabs(m.count, 0.0);
  std::vector<int64_t> piv;
  for (int64_t q = 0; q < m.count; ++q) {
    sign[q] = lu(f.at(q), m.n, piv);
    for (int64_t i = 0; i < m.n && sign[q] != 0.0; ++i) {
      const double v = f.at(q)[i * m.n + i];
      sign[q] *= v < 0 ? -1.0 : 1.0;
      logabs[q] += std::log(std::abs(v));
    }
    if (sign[q] == 0.0) logabs[q] = -std::numeric_limits<double>::infinity();
  }
  return {sign, logabs};
}
// A scalar per matrix, and its gradient g(q) * A^-T.
Tensor per_matrix(const char* name, const Tensor& x, const std::vector<double>& y, const std::vector<double>& g,
                  const std::string& who) {
  Tensor out = Tensor::empty(Shape(x.shape().begin(), x.shape().end() - 2));
  for (size_t q = 0; q < y.size(); ++q) out.data<float>()[q] = static_cast<float>(y[q]);
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record(name, {x}, out, [x, g, who](const Tensor& dy) {
      const Mats m = mats(x);
      Mats d = solve(m, identity(m.count, m.n), true, who);
      for (int64_t q = 0; q < m.count; ++q)
        for (int64_t i = 0; i < m.n * m.n; ++i) d.at(q)[i] *= g[q] * dy.data<float>()[q];
      return ops::Grads{tensor(d, x.shape())};
    });
  return out;
}
Tensor det(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  auto [sign, logabs] = sign_logabs(mats(x));
  std::vector<double> d(sign.size());
  for (size_t q = 0; q < d.size(); ++q) d[q] = sign[q] * std::exp(logabs[q]);
  return per_matrix("det", x, d, d, a.who());
}
std::vector<Shape> slogdet_shapes(const Args<Shape>& a) { return {batch_shape(a), batch_shape(a)}; }
std::vector<Tensor> slogdet(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  auto [sign, logabs] = sign_logabs(mats(x));
  Tensor s = Tensor::empty(Shape(x.shape().begin(), x.shape().end() - 2));
  for (size_t q = 0; q < sign.size(); ++q) s.data<float>()[q] = static_cast<float>(sign[q]);
  return {s, per_matrix("slogdet", x, logabs, std::vector<double>(sign.size(), 1.0), a.who())};
}

// ---- inv: Y = A^-1, dA = -Y^T dY Y^T.
Tensor inv(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const Mats m = mats(x);
  const Mats yi = solve(m, identity(m.count, m.n), false, a.who());
  const Tensor y = tensor(yi, x.shape());
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("inv", {x}, y, [yi, shape = x.shape()](const Tensor& dy) {
      return ops::Grads{tensor(scaled(mm(mm(yi, true, mats(dy), false), false, yi, true), -1.0), shape)};
    });
  return y;
}

// ---- solve A X = B; triangular: only A's lower (upper) triangle read, adjoint: A^T X = B.
// dB = A^-T dX, dA = -dB X^T (its triangle for a triangular A).
struct SolveKind {
  bool triangular = false, lower = true, adjoint = false;
};
Tensor solve_op(const Tensor& a, const Tensor& b, SolveKind k, const std::string& who) {
  Mats ma = mats(a);
  if (k.triangular) ma = triangle(ma, k.lower);
  const Mats x = solve(ma, mats(b), k.adjoint, who);
  const Tensor y = tensor(x, b.shape());
  if (ops::Recorder* r = ops::tape_for({&a, &b}))
    r->record("solve", {a, b}, y, [ma, x, k, who, sa = a.shape(), sb = b.shape()](const Tensor& dy) {
      const Mats db = solve(ma, mats(dy), !k.adjoint, who);
      Mats da = scaled(k.adjoint ? mm(x, false, db, true) : mm(db, false, x, true), -1.0);
      if (k.triangular) da = triangle(da, k.lower);
      return ops::Grads{tensor(da, sa), tensor(db, sb)};
    });
  return y;
}
template <class T>
void check_rhs(const Args<T>& a, const Shape& m, const Shape& b) {
  expect_square(a, m, "a");
  const bool vector = a.keras3() && b.size() + 1 == m.size();
  const Shape lead(m.begin(), m.end() - 2);
  if (b.size() < (vector ? 1 : 2) || Shape(b.begin(), b.end() - (vector ? 1 : 2)) != lead || b[vector ? b.size() - 1 : b.size() - 2] != m.back())
    a.fail("b", "a right-hand side of the matrix's batch shape and " + std::to_string(m.back()) + " rows (kerascpp does not "
           "broadcast them). Its shape is " + shape_str(b));
}
Shape solve_shape(const Args<Shape>& a) {
  check_rhs(a, a.value("a"), a.value("b"));
  return a.value("b");
}
template <bool triangular>
Tensor solve(const Args<Tensor>& a) {
  const Tensor m = a.value("a");
  Tensor b = a.value("b");
  const Shape sb = b.shape();
  check_rhs(a, m.shape(), sb);
  if (b.rank() + 1 == m.rank()) {
    Shape s = sb;
    s.push_back(1);
    b = b.reshape(s);
  }
  SolveKind k{triangular, a.get("lower", !a.keras3()), a.get("adjoint", false)};
  return solve_op(m, b, k, a.who()).reshape(sb);
}

// ---- cholesky: L L^T = A from A's lower triangle; TensorFlow's gradient (symmetric):
// P = tril(L^T dL) with its diagonal halved, S = L^-T P L^-1, dA = (S + S^T) / 2.
Mats cholesky_of(const Mats& a, const std::string& who) {
  Mats l{a.count, a.n, a.n, std::vector<double>(a.v.size(), 0.0)};
  const int64_t n = a.n;
  for (int64_t q = 0; q < a.count; ++q)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = j; i < n; ++i) {
        double s = a.at(q)[i * n + j];
        for (int64_t k = 0; k < j; ++k) s -= l.at(q)[i * n + k] * l.at(q)[j * n + k];
        if (i == j) {
          KCPP_CHECK(s > 0.0, ValueError, who, ": the matrix is not positive definite (Cholesky decomposition failed)");
          l.at(q)[i * n + i] = std::sqrt(s);
        } else {
          l.at(q)[i * n + j] = s / l.at(q)[j * n + j];
        }
      }
  return l;
}
Mats cholesky_grad(const Mats& l, const Mats& dl, const std::string& who) {
  Mats p = triangle(mm(l, true, dl, false), true);
  for (int64_t q = 0; q < p.count; ++q) for (int64_t i = 0; i < p.n; ++i) p.at(q)[i * p.n + i] *= 0.5;
  const Mats li = solve(l, identity(l.count, l.n), false, who);
  const Mats s = mm(mm(li, true, p, false), false, li, false);
  return scaled(plus(s, transposed(s)), 0.5);
}
Tensor cholesky_op(const Tensor& x, const std::string& who) {
  const Mats l = cholesky_of(mats(x), who);
  const Tensor y = tensor(l, x.shape());
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("cholesky", {x}, y, [l, who, shape = x.shape()](const Tensor& dy) {
      return ops::Grads{tensor(cholesky_grad(l, mats(dy), who), shape)};
    });
  return y;
}
Tensor cholesky(const Args<Tensor>& a) {
  const Tensor l = cholesky_op(a.value("x"), a.who());
  return a.get("upper", false) ? swap_last(l) : l;
}
// logdet = 2 sum(log(diag(L))), gradient A^-1 = L^-T L^-1 (what TensorFlow's gradient through its
// cholesky gives).
Tensor logdet(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const Mats l = cholesky_of(mats(x), a.who());
  std::vector<double> v(l.count, 0.0);
  for (int64_t q = 0; q < l.count; ++q) for (int64_t i = 0; i < l.n; ++i) v[q] += 2.0 * std::log(l.at(q)[i * l.n + i]);
  Tensor y = Tensor::empty(Shape(x.shape().begin(), x.shape().end() - 2));
  for (int64_t q = 0; q < l.count; ++q) y.data<float>()[q] = static_cast<float>(v[q]);
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("logdet", {x}, y, [l, who = a.who(), shape = x.shape()](const Tensor& dy) {
      const Mats li = solve(l, identity(l.count, l.n), false, who);
      Mats g = mm(li, true, li, false);
      for (int64_t q = 0; q < g.count; ++q) for (int64_t i = 0; i < g.n * g.n; ++i) g.at(q)[i] *= dy.data<float>()[q];
      return ops::Grads{tensor(g, shape)};
    });
  return y;
}
// cholesky_inverse(L): (L L^T)^-1 as Keras computes it, L^-1 by a triangular solve (U^T U for upper).
Tensor matmul3(const Tensor& x, const Tensor& y) {
  const Shape s = x.shape();
  return ops::batch_matmul(x.reshape({-1, x.dim(-2), x.dim(-1)}), y.reshape({-1, y.dim(-2), y.dim(-1)})).reshape(s);
}
Tensor cholesky_inverse(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const bool upper = a.get("upper", false);
  const Mats e = identity(x.size() / std::max<int64_t>(x.dim(-1) * x.dim(-1), 1), x.dim(-1));
  const Tensor li = solve_op(x, tensor(e, x.shape()), SolveKind{true, !upper, false}, a.who());
  return upper ? matmul3(li, swap_last(li)) : matmul3(swap_last(li), li);
}

// ---- norm. Keras 3: ord None / 'fro' / 'nuc' / inf / -inf / numbers over one axis (a vector norm) or
// two (a matrix norm), every axis when axis is null. tf.norm: ord 'euclidean' / 'fro' / numbers / inf,
// every axis flattened when axis is null.
struct NormSpec {
  std::vector<int> axes;  // one or two, normalised
  bool keep = false;
  Json ord;
};
template <class T>
NormSpec norm_spec(const Args<T>& a, int rank) {
  NormSpec s;
  s.ord = a.json("ord");
  s.keep = a.get("keepdims", false);
  const Json& ax = a.json("axis");
  if (ax.is_null()) {
    if (a.keras3() && rank > 2) a.fail("axis", "given for an input of rank " + std::to_string(rank) + " (one or two axes)");
    if (a.keras3() || rank <= 1) {
      s.axes.resize(rank);
      std::iota(s.axes.begin(), s.axes.end(), 0);
    } else {
      s.axes = {-1};  // tf.norm: the flattened tensor, a vector norm (the caller flattens)
    }
    if (!a.keras3()) return s;
  } else {
    s.axes = a.axes("axis");
  }
  if (s.axes.empty() || s.axes.size() > 2) a.fail("axis", "one axis or a pair of axes");
  for (int& d : s.axes) {
    if (d < -rank || d >= rank) a.fail("axis", "an axis of the input's " + std::to_string(rank) + " dims");
    d = d < 0 ? d + rank : d;
  }
  if (s.axes.size() == 2 && s.axes[0] == s.axes[1]) a.fail("axis", "two distinct axes");
  return s;
}
Shape norm_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  const NormSpec s = norm_spec(a, static_cast<int>(x.size()));
  if (!a.keras3() && a.json("axis").is_null()) return s.keep ? Shape(x.size(), 1) : Shape{};
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    const bool reduced = std::find(s.axes.begin(), s.axes.end(), static_cast<int>(d)) != s.axes.end();
    if (!reduced) out.push_back(x[d]);
    else if (s.keep) out.push_back(1);
  }
  return out;
}
Tensor neg(const Tensor& x) { return ops::scale_shift(x, -1.f, 0.f); }
Tensor max_kept(const Tensor& x, int axis) { return ops::reduce_max(x, {axis}, true); }
Tensor min_kept(const Tensor& x, int axis) { return neg(ops::reduce_max(neg(x), {axis}, true)); }
double ord_number(const Json& o) {
  if (o.is_number()) return o.get<double>();
  const std::string s = o.get<std::string>();  // Infinity as a Python float writes it
  return s.find("nf") != std::string::npos ? (s[0] == '-' ? -1 : 1) * std::numeric_limits<double>::infinity()
                                           : std::numeric_limits<double>::quiet_NaN();
}
bool ord_is(const Json& o, const char* name) { return o.is_string() && o.get<std::string>() == name; }
bool is_number_ord(const Json& o) {
  return o.is_number() || (o.is_string() && std::abs(ord_number(o)) == std::numeric_limits<double>::infinity());
}
Tensor norm(const Args<Tensor>& a) {
  Tensor x = a.value("x");
  const Shape in = x.shape();
  NormSpec s = norm_spec(a, x.rank());
  const bool flat = !a.keras3() && a.json("axis").is_null();
  if (flat) {
    x = x.reshape({x.size()});
    s.axes = {0};
  }
  const Json& o = s.ord;
  Tensor kept;
  const Tensor ax = ops::unary(UnaryOp::abs, x);
  auto sum = [](const Tensor& t, std::vector<int> axes) { return ops::detail::sum_axes(t, axes); };
  auto euclid = [&] { return ops::unary(UnaryOp::sqrt, sum(ops::unary(UnaryOp::square, x), s.axes)); };
  if (s.axes.size() == 1) {
    const int d = s.axes[0];
    if (o.is_null() || ord_is(o, "euclidean") || (!a.keras3() && ord_is(o, "fro")) || (o.is_number() && o.get<double>() == 2.0)) {
      kept = euclid();
    } else if (is_number_ord(o)) {
      const double p = ord_number(o);
      if (std::isinf(p)) {
        if (p < 0 && !a.keras3()) a.fail("ord", "supported for a vector norm by tf.norm");
        kept = p > 0 ? max_kept(ax, d) : min_kept(ax, d);
      } else if (p == 0.0 && a.keras3()) {
        kept = sum(ops::not_equal(x, ops::detail::scalar(0.f)), {d});
      } else {
        if (!a.keras3() && p <= 0) a.fail("ord", "a positive number for tf.norm");
        kept = power(sum(power(ax, ops::detail::scalar(static_cast<float>(p))), {d}),
                     ops::detail::scalar(static_cast<float>(1.0 / p)));
      }
    } else {
      a.fail("ord", "an order for a vector norm");
    }
  } else {
    const int row = s.axes[0], col = s.axes[1];
    if (o.is_null() || ord_is(o, "fro") || ord_is(o, "euclidean")) {
      kept = euclid();
    } else if (ord_is(o, "nuc") || (o.is_number() && std::abs(o.get<double>()) == 2.0)) {
      a.fail("ord", "supported by kerascpp for a matrix norm (singular values)");
    } else if (is_number_ord(o) && std::abs(ord_number(o)) == 1.0) {
      const Tensor c = sum(ax, {row});
      kept = ord_number(o) > 0 ? max_kept(c, col) : min_kept(c, col);
    } else if (is_number_ord(o) && std::isinf(ord_number(o))) {
      const Tensor r = sum(ax, {col});
      kept = ord_number(o) > 0 ? max_kept(r, row) : min_kept(r, row);
    } else {
      a.fail("ord", "an order for a matrix norm");
    }
  }
  if (flat) return kept.reshape(s.keep ? Shape(in.size(), 1) : Shape{});
  Shape out;
  for (int d = 0; d < x.rank(); ++d) {
    const bool reduced = std::find(s.axes.begin(), s.axes.end(), d) != s.axes.end();
    if (!reduced) out.push_back(x.dim(d));
    else if (s.keep) out.push_back(1);
  }
  return kept.reshape(out);
}

}  // namespace

std::vector<OpDef> linalg::solve_ops() {
  const std::vector<std::pair<std::string, std::string>> tf_solve = {{"matrix", "a"}, {"rhs", "b"}};
  return {
      OpDef{"ops.linalg.Det", "linalg.det|matrix_determinant|linalg.matrix_determinant", {"x"}, {{"input", "x"}}, batch_shape, det},
      OpDef{"ops.numpy.Slogdet", nullptr, {"x"}, {}, nullptr, nullptr, slogdet_shapes, slogdet},
      OpDef{"ops.linalg.Inv", "linalg.inv|matrix_inverse|linalg.matrix_inverse", {"x", "adjoint"}, {{"input", "x"}}, square_shape,
            [](const Args<Tensor>& a) {
              if (a.get("adjoint", false)) a.fail("adjoint", "supported by kerascpp");
              return inv(a);
            }},
      OpDef{"ops.linalg.Solve", "linalg.solve|matrix_solve", {"a", "b", "adjoint"}, tf_solve, solve_shape, solve<false>},
      OpDef{"ops.linalg.SolveTriangular", "linalg.triangular_solve|matrix_triangular_solve", {"a", "b", "lower", "adjoint"},
            tf_solve, solve_shape, solve<true>},
      OpDef{"ops.linalg.Cholesky", "linalg.cholesky|cholesky", {"x", "upper"}, {{"input", "x"}}, square_shape, cholesky},
      OpDef{"ops.linalg.CholeskyInverse", nullptr, {"x", "upper"}, {}, square_shape, cholesky_inverse},
      OpDef{"ops.math.Logdet", nullptr, {"x"}, {}, batch_shape, logdet},
      OpDef{"ops.linalg.Norm", "norm|linalg.norm|compat.v1.norm|compat.v1.linalg.norm", {"x", "ord", "axis", "keepdims"},
            {{"tensor", "x"}, {"keep_dims", "keepdims"}}, norm_shape, norm},
  };
}

}  // namespace kerascpp::layers::op_nodes
