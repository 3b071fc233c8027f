// Op nodes computed from a decomposition: keras.ops.linalg pinv / lstsq / matrix_rank and tf.linalg's
// pinv / lstsq / matrix_rank (singular values by a one-sided Jacobi SVD in double precision; U S+ V^T
// needs no sign convention), and connectionist temporal classification: keras.ops.nn ctc_loss /
// ctc_decode (greedy) and tf.nn.ctc_loss (TF's dense forward-backward over its state machine, in
// double precision). Over the last two dims, every leading dim a batch.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "layers/op_nodes/linalg_svd.h"
#include "layers/op_nodes/op_node.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
namespace {

constexpr double kEps32 = 1.1920928955078125e-07;  // np.finfo(float32).eps
constexpr double kInf = std::numeric_limits<double>::infinity();

using M = linalg::Mat;
using linalg::lin;
using linalg::mul;
using linalg::tr;

M eye(int64_t n) {
  M e(n, n);
  for (int64_t i = 0; i < n; ++i) e(i, i) = 1.0;
  return e;
}
// A tensor (..., r, c) as its matrices, and back.
std::vector<M> matrices(const Tensor& t) {
  const int64_t r = t.dim(-2), c = t.dim(-1), n = r * c == 0 ? 0 : t.size() / (r * c);
  std::vector<M> out(n, M(r, c));
  for (int64_t q = 0; q < n; ++q) std::copy(t.data<float>() + q * r * c, t.data<float>() + (q + 1) * r * c, out[q].v.begin());
  return out;
}
Tensor tensor(const std::vector<M>& ms, const Shape& shape) {
  Tensor t = Tensor::empty(shape);
  int64_t k = 0;
  for (const M& m : ms) for (double x : m.v) t.data<float>()[k++] = static_cast<float>(x);
  return t;
}
Shape batch_of(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

// ---- thin SVD A = U diag(s) V^T, s descending (linalg_svd.h: one-sided Jacobi).
struct Svd {
  std::vector<double> s;
  M u, v;
};
Svd svd(const M& a) {
  linalg::JacobiSvd d = linalg::jacobi_svd(a.v.data(), a.r, a.c);
  const int64_t k = static_cast<int64_t>(d.s.size());
  Svd out{std::move(d.s), M(a.r, k), M(a.c, k)};
  out.u.v = std::move(d.u);
  out.v.v = std::move(d.v);
  return out;
}
// V diag(1 / s) U^T over the singular values `keep` says to keep (n x m).
template <class Keep>
M pinv_of(const M& a, Keep keep) {
  const Svd d = svd(a);
  M p(a.c, a.r);
  for (size_t k = 0; k < d.s.size(); ++k) {
    if (!keep(d.s[k], d.s)) continue;
    const double inv = 1.0 / d.s[k];
    for (int64_t i = 0; i < a.c; ++i)
      for (int64_t j = 0; j < a.r; ++j) p(i, j) += d.v(i, k) * inv * d.u(j, k);
  }
  return p;
}
// d pinv(A) for a constant rank (Golub & Pereyra): the gradient of A given that of P = pinv(A).
M pinv_grad(const M& a, const M& p, const M& g) {
  const M pt = tr(p), gt = tr(g);
  M da = lin(M(a.r, a.c), -1.0, mul(mul(pt, g), pt));
  da = lin(da, 1.0, mul(mul(lin(eye(a.r), -1.0, mul(a, p)), gt), mul(p, pt)));
  return lin(da, 1.0, mul(mul(mul(pt, p), gt), lin(eye(a.c), -1.0, mul(p, a))));
}

template <class T>
void expect_matrix(const Args<T>& a, const Shape& s, const char* name) {
  if (s.size() < 2) a.fail(name, "a (batch of) matrices: of rank >= 2. Its shape is " + shape_str(s));
}
double scalar_arg(const Args<Tensor>& a, const char* name) {
  const Tensor t = a.value(name);
  if (t.size() != 1) a.fail(name, "a single number (a cutoff per matrix is not supported by kerascpp)");
  return t.data<float>()[0];
}

// ---- pinv: TF's tf.linalg.pinv (Keras's TF backend calls it): singular values > rcond * max(s) kept,
// rcond 10 * max(m, n) * eps(float32) by default.
Shape pinv_shape(const Args<Shape>& a) {
  Shape x = a.value("x");
  expect_matrix(a, x, "x");
  std::swap(x[x.size() - 1], x[x.size() - 2]);
  return x;
}
Tensor pinv(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  expect_matrix(a, x.shape(), "x");
  const double rcond = a.has("rcond") ? scalar_arg(a, "rcond") : 10.0 * std::max(x.dim(-2), x.dim(-1)) * kEps32;
  const std::vector<M> ms = matrices(x);
  std::vector<M> ps;
  for (const M& m : ms)
    ps.push_back(pinv_of(m, [&](double s, const std::vector<double>& all) { return s > rcond * all[0]; }));
  const Tensor y = tensor(ps, pinv_shape(Args<Shape>(Json::object({{"x", Json{{"kerascpp_input", 0}}}}), {x.shape()}, a.who())));
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("pinv", {x}, y, [x, ms, ps](const Tensor& dy) {
      const std::vector<M> g = matrices(dy);
      std::vector<M> da;
      for (size_t q = 0; q < ms.size(); ++q) da.push_back(pinv_grad(ms[q], ps[q], g[q]));
      return ops::Grads{tensor(da, x.shape())};
    });
  return y;
}

// ---- lstsq. Keras 3 (its TF backend's own SVD code): a (m, n), b (m,) or (m, k); singular values
// >= rcond * s[0] kept, rcond eps(float32) * max(m, n) by default, eps when negative. x = pinv b.
Shape keras_lstsq_shape(const Args<Shape>& a) {
  const Shape sa = a.value("a"), sb = a.value("b");
  if (sa.size() != 2) a.fail("a", "of rank 2. Its shape is " + shape_str(sa));
  if (sb.size() != 1 && sb.size() != 2) a.fail("b", "of rank 1 or 2. Its shape is " + shape_str(sb));
  if (sa[0] >= 0 && sb[0] >= 0 && sa[0] != sb[0]) a.fail("b", "of a.shape[0] rows. Its shape is " + shape_str(sb));
  return sb.size() == 1 ? Shape{sa[1]} : Shape{sa[1], sb[1]};
}
Tensor keras_lstsq(const Args<Tensor>& a) {
  const Tensor ta = a.value("a"), tb = a.value("b");
  const Shape out = keras_lstsq_shape(Args<Shape>(Json::object({{"a", Json{{"kerascpp_input", 0}}}, {"b", Json{{"kerascpp_input", 1}}}}),
                                                  {ta.shape(), tb.shape()}, a.who()));
  double rcond = a.has("rcond") ? scalar_arg(a, "rcond") : kEps32 * std::max(ta.dim(0), ta.dim(1));
  if (rcond < 0) rcond = kEps32;
  const M m = matrices(ta)[0];
  M b(tb.dim(0), tb.rank() == 1 ? 1 : tb.dim(1));
  std::copy(tb.data<float>(), tb.data<float>() + tb.size(), b.v.begin());
  bool zero = false;
  const M p = pinv_of(m, [&](double s, const std::vector<double>& all) {
    zero = zero || (s == 0.0 && s >= rcond * all[0]);  // Keras keeps s = 0 when s[0] = 0: 1 / 0
    return s > 0.0 && s >= rcond * all[0];
  });
  M x = mul(p, b);
  if (zero) std::fill(x.v.begin(), x.v.end(), std::numeric_limits<double>::quiet_NaN());
  const Tensor y = tensor({x}, out);
  if (ops::Recorder* r = ops::tape_for({&ta, &tb}))
    r->record("lstsq", {ta, tb}, y, [ta, tb, m, b, p](const Tensor& dy) {
      M g(p.r, b.c);
      std::copy(dy.data<float>(), dy.data<float>() + dy.size(), g.v.begin());
      return ops::Grads{tensor({pinv_grad(m, p, mul(g, tr(b)))}, ta.shape()), tensor({mul(tr(p), g)}, tb.shape())};
    });
  return y;
}

// tf.linalg.lstsq (matrix_solve_ls): fast, the regularised normal equations by Cholesky: m >= n:
// (A^T A + l I)^-1 A^T B, else A^T (A A^T + l I)^-1 B; not fast, the minimum-norm solution (TF's
// complete orthogonal decomposition; here the SVD, rank cut at eps(float32) * max(m, n) * s[0]).
M cholesky(M g, const std::string& who) {
  const int64_t n = g.r;
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t k = 0; k < j; ++k) g(j, j) -= g(j, k) * g(j, k);
    KCPP_CHECK(g(j, j) > 0.0, ValueError, who, ": the regularised Gramian is not positive definite (Cholesky fails)");
    g(j, j) = std::sqrt(g(j, j));
    for (int64_t i = j + 1; i < n; ++i) {
      for (int64_t k = 0; k < j; ++k) g(i, j) -= g(i, k) * g(j, k);
      g(i, j) /= g(j, j);
    }
    for (int64_t i = 0; i < j; ++i) g(i, j) = 0.0;
  }
  return g;
}
M chol_solve(const M& l, M b) {  // (L L^T)^-1 b
  const int64_t n = l.r;
  for (int64_t j = 0; j < b.c; ++j) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < i; ++k) b(i, j) -= l(i, k) * b(k, j);
      b(i, j) /= l(i, i);
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      for (int64_t k = i + 1; k < n; ++k) b(i, j) -= l(k, i) * b(k, j);
      b(i, j) /= l(i, i);
    }
  }
  return b;
}
Shape tf_lstsq_shape(const Args<Shape>& a) {
  const Shape sa = a.value("a"), sb = a.value("b");
  expect_matrix(a, sa, "matrix");
  expect_matrix(a, sb, "rhs");
  if (sa.size() != sb.size() || !std::equal(sa.begin(), sa.end() - 1, sb.begin()))
    a.fail("rhs", "of the matrix's batch shape and rows (shape " + shape_str(sa) + "). Its shape is " + shape_str(sb));
  Shape out = sb;
  out[out.size() - 2] = sa.back();
  return out;
}
Tensor tf_lstsq(const Args<Tensor>& a) {
  const Tensor ta = a.value("a"), tb = a.value("b");
  const Shape out = tf_lstsq_shape(Args<Shape>(Json::object({{"a", Json{{"kerascpp_input", 0}}}, {"b", Json{{"kerascpp_input", 1}}}}),
                                               {ta.shape(), tb.shape()}, a.who()));
  const bool fast = a.get("fast", true);
  const double l2 = fast && a.has("l2_regularizer") ? scalar_arg(a, "l2_regularizer") : 0.0;
  const std::vector<M> as = matrices(ta), bs = matrices(tb);
  const int64_t m = ta.dim(-2), n = ta.dim(-1);
  std::vector<M> xs, ps, chols;
  for (size_t q = 0; q < as.size(); ++q) {
    const M& A = as[q];
    if (!fast) {
      const double cut = kEps32 * std::max(m, n);
      ps.push_back(pinv_of(A, [&](double s, const std::vector<double>& all) { return s > cut * all[0]; }));
      xs.push_back(mul(ps.back(), bs[q]));
    } else if (m >= n) {
      chols.push_back(cholesky(lin(mul(tr(A), A), l2, eye(n)), a.who()));
      xs.push_back(chol_solve(chols.back(), mul(tr(A), bs[q])));
    } else {
      chols.push_back(cholesky(lin(mul(A, tr(A)), l2, eye(m)), a.who()));
      xs.push_back(mul(tr(A), chol_solve(chols.back(), bs[q])));
    }
  }
  const Tensor y = tensor(xs, out);
  if (ops::Recorder* r = ops::tape_for({&ta, &tb}))
    r->record("lstsq", {ta, tb}, y, [ta, tb, as, bs, xs, ps, chols, fast, m, n](const Tensor& dy) {
      const std::vector<M> g = matrices(dy);
      std::vector<M> da, db;
      for (size_t q = 0; q < as.size(); ++q) {
        const M &A = as[q], &B = bs[q], &X = xs[q];
        if (!fast) {  // X = P B
          da.push_back(pinv_grad(A, ps[q], mul(g[q], tr(B))));
          db.push_back(mul(tr(ps[q]), g[q]));
        } else if (m >= n) {  // Z = G^-1 dX: dB = A Z, dA = (B - A X) Z^T - A Z X^T
          const M z = chol_solve(chols[q], g[q]), az = mul(A, z);
          da.push_back(lin(mul(lin(B, -1.0, mul(A, X)), tr(z)), -1.0, mul(az, tr(X))));
          db.push_back(az);
        } else {  // X = A^T W, W = H^-1 B: V = H^-1 A dX; dB = V, dA = W dX^T - V W^T A - W V^T A
          const M w = chol_solve(chols[q], B), v = chol_solve(chols[q], mul(A, g[q]));
          da.push_back(lin(lin(mul(w, tr(g[q])), -1.0, mul(mul(v, tr(w)), A)), -1.0, mul(mul(w, tr(v)), A)));
          db.push_back(v);
        }
      }
      return ops::Grads{tensor(da, ta.shape()), tensor(db, tb.shape())};
    });
  return y;
}

// ---- matrix_rank: TF's tf.linalg.matrix_rank: the singular values > tol, tol eps(float32) *
// max(m, n) * max(s) by default. An integer: no gradient.
Shape rank_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  expect_matrix(a, x, "x");
  return batch_of(x);
}
Tensor matrix_rank(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  expect_matrix(a, x.shape(), "x");
  const bool given = a.has("tol");
  const double tol = given ? scalar_arg(a, "tol") : 0.0;
  Tensor y = Tensor::empty(batch_of(x.shape()));
  int64_t q = 0;
  for (const M& m : matrices(x)) {
    const std::vector<double> s = svd(m).s;
    const double cut = given ? tol : kEps32 * static_cast<double>(std::max(m.r, m.c)) * (s.empty() ? 0.0 : s[0]);
    y.data<float>()[q++] = static_cast<float>(std::count_if(s.begin(), s.end(), [&](double v) { return v > cut; }));
  }
  return y;
}


// ---- CTC, as TF's ctc_loss_dense computes it (Keras's TF backend calls tf.nn.ctc_loss with
// logits_time_major=False, blank_index=mask_index): log_softmax over the classes; the blank moved to
// class 0 and labels below it shifted up (so a label equal to the blank reads the class below it);
// states [start, label 1..L, blank after 0..L labels]; a label repeated without a blank between
// needs one; the final states are those after label_length labels, every other one (and all when
// label_length is out of [0, L]) counts log(1e-307) as float32, not -inf, so a label no alignment
// reaches has a large finite loss as in TF. A label id outside the classes reads probability 1 (TF's
// one_hot of it is zeros). Frames at and beyond logit_length are ignored. Computed in double; the
// gradient (logits only) by alpha-beta: softmax * sum(posteriors) - posterior per class.
double lse(double a, double b) {
  if (a == -kInf) return b;
  if (b == -kInf) return a;
  const double m = std::max(a, b);
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}
// One sample's loss; its gradient (frames x classes) into grad when given.
double ctc_sample(const std::vector<double>& x, int64_t T, int64_t C, const std::vector<int64_t>& labels, int64_t label_len,
                  int64_t frames, int64_t blank, std::vector<double>* grad) {
  const int64_t L = static_cast<int64_t>(labels.size()), S = 2 * L + 2, n = std::clamp<int64_t>(frames, 0, T);
  std::vector<double> lp(T * C), sm(T * C);
  for (int64_t t = 0; t < T; ++t) {
    const double* row = x.data() + t * C;
    const double mx = *std::max_element(row, row + C);
    double sum = 0;
    for (int64_t c = 0; c < C; ++c) sum += std::exp(row[c] - mx);
    for (int64_t c = 0; c < C; ++c) {
      lp[t * C + c] = row[c] - mx - std::log(sum);
      sm[t * C + c] = std::exp(lp[t * C + c]);
    }
  }
  std::vector<int64_t> rot(L), cls(S, blank);  // cls: -2 never observed (start), -1 probability 1
  cls[0] = -2;
  for (int64_t i = 0; i < L; ++i) {
    const int64_t r = rot[i] = blank != 0 && labels[i] < blank ? labels[i] + 1 : labels[i];
    cls[1 + i] = r < 0 || r >= C ? -1 : r == 0 ? blank : r <= blank ? r - 1 : r;
  }
  std::vector<std::vector<int64_t>> pred(S), succ(S);
  pred[0] = {0};
  for (int64_t i = 1; i <= L; ++i) {
    pred[i] = {i, L + i};
    if (i == 1) pred[i].push_back(0);
    else if (rot[i - 2] != rot[i - 1]) pred[i].push_back(i - 1);
  }
  for (int64_t j = 0; j <= L; ++j) pred[L + 1 + j] = {L + 1 + j, j};
  for (int64_t s = 0; s < S; ++s) for (int64_t p : pred[s]) succ[p].push_back(s);
  auto obs = [&](int64_t t, int64_t s) { return cls[s] == -2 ? -kInf : cls[s] == -1 ? 0.0 : lp[t * C + cls[s]]; };
  const double log0 = static_cast<float>(std::log(1e-307));
  std::vector<double> fin(S, log0);
  if (label_len >= 0 && label_len <= L) fin[label_len] = fin[L + 1 + label_len] = 0.0;
  if (n == 0) {
    if (grad) grad->assign(T * C, 0.0);
    return -fin[0];
  }
  std::vector<double> b(n * S, -kInf), f(n * S, -kInf);
  std::copy(fin.begin(), fin.end(), b.begin() + (n - 1) * S);
  for (int64_t t = n - 2; t >= 0; --t)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t q : succ[s]) b[t * S + s] = lse(b[t * S + s], obs(t + 1, q) + b[(t + 1) * S + q]);
  double ll = -kInf;
  for (int64_t q : succ[0]) ll = lse(ll, obs(0, q) + b[q]);
  if (!grad) return -ll;
  for (int64_t q : succ[0]) f[q] = obs(0, q);
  for (int64_t t = 1; t < n; ++t)
    for (int64_t s = 0; s < S; ++s) {
      double v = -kInf;
      for (int64_t p : pred[s]) v = lse(v, f[(t - 1) * S + p]);
      f[t * S + s] = v + obs(t, s);
    }
  grad->assign(T * C, 0.0);
  std::vector<double> g(C);
  for (int64_t t = 0; t < n; ++t) {
    std::fill(g.begin(), g.end(), 0.0);
    for (int64_t s = 0; s < S; ++s)
      if (cls[s] >= 0 && f[t * S + s] > -kInf) g[cls[s]] += std::exp(f[t * S + s] + b[t * S + s] - ll);
    const double total = std::accumulate(g.begin(), g.end(), 0.0);
    for (int64_t c = 0; c < C; ++c) (*grad)[t * C + c] = sm[t * C + c] * total - g[c];
  }
  return -ll;
}
int64_t whole(float v) { return static_cast<int64_t>(v); }  // tf.cast to int32: toward zero

// Both dialects: labels (B, L), logits (B, T, C) or time-major (T, B, C), lengths (B,).
struct CtcArgs {
  const char *labels, *logits, *label_length, *logit_length;
  bool time_major;
  int64_t blank;
};
template <class T>
int64_t ctc_batch(const Args<T>& a, const CtcArgs& n, const Shape& lab, const Shape& lg) {
  if (lab.size() != 2) a.fail(n.labels, "of rank 2 (batch, max_label_length). Its shape is " + shape_str(lab));
  if (lg.size() != 3) a.fail(n.logits, "of rank 3. Its shape is " + shape_str(lg));
  const int64_t batch = lg[n.time_major ? 1 : 0];
  if (batch >= 0 && lab[0] >= 0 && batch != lab[0]) a.fail(n.labels, "of the logits' batch size " + std::to_string(batch));
  return batch;
}
Tensor ctc_loss(const Args<Tensor>& a, const CtcArgs& n) {
  const Tensor lab = a.value(n.labels), lg = a.value(n.logits), ll = a.value(n.label_length), gl = a.value(n.logit_length);
  const int64_t B = ctc_batch(a, n, lab.shape(), lg.shape()), T = lg.dim(n.time_major ? 0 : 1), C = lg.dim(2), L = lab.dim(1);
  if (ll.size() != B) a.fail(n.label_length, "of shape (batch,)");
  if (gl.size() != B) a.fail(n.logit_length, "of shape (batch,)");
  const int64_t blank = n.blank < 0 ? n.blank + C : n.blank;
  if (blank < 0 || blank >= C) a.fail(n.time_major ? "blank_index" : "mask_index", "a class index in [-" + std::to_string(C) + ", " +
                                      std::to_string(C) + ")");
  const bool want = ops::tape_for({&lg}) != nullptr;
  auto at = [&](int64_t b, int64_t t) { return (n.time_major ? t * B + b : b * T + t) * C; };
  Tensor y = Tensor::empty({B});
  Tensor dx = want ? Tensor::zeros(lg.shape()) : Tensor();
  std::vector<double> x(T * C), grad;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) std::copy(lg.data<float>() + at(b, t), lg.data<float>() + at(b, t) + C, x.begin() + t * C);
    std::vector<int64_t> labels(L);
    for (int64_t i = 0; i < L; ++i) labels[i] = whole(lab.data<float>()[b * L + i]);
    y.data<float>()[b] = static_cast<float>(ctc_sample(x, T, C, labels, whole(ll.data<float>()[b]), whole(gl.data<float>()[b]), blank,
                                                       want ? &grad : nullptr));
    if (want)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < C; ++c) dx.data<float>()[at(b, t) + c] = static_cast<float>(grad[t * C + c]);
  }
  if (want)
    ops::tape_for({&lg})->record("ctc_loss", {lab, lg, ll, gl}, y, [dx, B, C, T, major = n.time_major](const Tensor& dy) {
      Tensor d = dx.copy();
      for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T; ++t)
          for (int64_t c = 0; c < C; ++c) d.data<float>()[(major ? t * B + b : b * T + t) * C + c] *= dy.data<float>()[b];
      return ops::Grads{Tensor(), d, Tensor(), Tensor()};
    });
  return y;
}
const CtcArgs kKerasCtc{"target", "output", "target_length", "output_length", false, 0};
CtcArgs tf_ctc(const Args<Shape>& a) {
  return {"labels", "logits", "label_length", "logit_length", a.get("logits_time_major", true), a.get<int64_t>("blank_index", 0)};
}
CtcArgs tf_ctc(const Args<Tensor>& a) {
  if (a.has("unique")) a.fail("unique", "supported by kerascpp (dense labels only)");
  return {"labels", "logits", "label_length", "logit_length", a.get("logits_time_major", true), a.get<int64_t>("blank_index", 0)};
}

// ---- ctc_decode, greedy (tf.nn.ctc_greedy_decoder): per frame below the sequence length the first
// class of the largest logit; repeats merged (merge_repeated) and blanks dropped; decoded (1, B, T)
// padded with -1, and the negative sum of the frames' largest logits (B, 1).
template <class T>
void expect_greedy(const Args<T>& a) {
  const std::string s = a.template get<std::string>("strategy", "greedy");
  if (s == "beam_search")
    KCPP_THROW(NotImplementedError, a.who(), ": strategy='beam_search' is not supported by kerascpp (TF's beam search, its "
               "pruning and merging of beams, is not reproduced; strategy='greedy' is)");
  if (s != "greedy") a.fail("strategy", "'greedy' or 'beam_search'");
}
std::vector<Shape> ctc_decode_shapes(const Args<Shape>& a) {
  expect_greedy(a);
  const Shape x = a.value("inputs");
  if (x.size() != 3) a.fail("inputs", "of rank 3 (batch, max_length, num_classes). Its shape is " + shape_str(x));
  return {{1, x[0], x[1]}, {x[0], 1}};
}
std::vector<Tensor> ctc_decode(const Args<Tensor>& a) {
  expect_greedy(a);
  const Tensor x = a.value("inputs"), len = a.value("sequence_lengths");
  if (x.rank() != 3) a.fail("inputs", "of rank 3 (batch, max_length, num_classes). Its shape is " + shape_str(x.shape()));
  const int64_t B = x.dim(0), T = x.dim(1), C = x.dim(2);
  if (len.size() != B) a.fail("sequence_lengths", "of shape (batch,)");
  // mask_index None: TF's default blank, the last class; negative from the end.
  int64_t blank = a.has("mask_index") ? a.get<int64_t>("mask_index", 0) : a.given("mask_index") ? C - 1 : 0;
  if (blank < 0) blank += C;
  const bool merge = a.get("merge_repeated", true);
  Tensor decoded = Tensor::empty({1, B, T}), score = Tensor::empty({B, 1});
  std::fill(decoded.data<float>(), decoded.data<float>() + decoded.size(), -1.f);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = whole(len.data<float>()[b]);
    if (n < 0 || n > T) a.fail("sequence_lengths", "in [0, max_length=" + std::to_string(T) + "]");
    float sum = 0.f;
    int64_t prev = -1, k = 0;
    for (int64_t t = 0; t < n; ++t) {
      const float* row = x.data<float>() + (b * T + t) * C;
      const int64_t best = std::max_element(row, row + C) - row;
      sum += -row[best];
      if (best != blank && !(merge && best == prev)) decoded.data<float>()[b * T + k++] = static_cast<float>(best);
      prev = best;
    }
    score.data<float>()[b] = sum;
  }
  return {decoded, score};
}

}  // namespace

std::vector<OpDef> decomposition_ops() {
  std::vector<OpDef> defs = {
      OpDef{"ops.linalg.Pinv", "linalg.pinv", {"x", "rcond", "validate_args"}, {{"a", "x"}}, pinv_shape, pinv},
      OpDef{"ops.linalg.Lstsq", nullptr, {"a", "b", "rcond"}, {}, keras_lstsq_shape, keras_lstsq},
      OpDef{nullptr, "linalg.lstsq", {"a", "b", "l2_regularizer", "fast"},
            {{"matrix", "a"}, {"rhs", "b"}}, tf_lstsq_shape, tf_lstsq},
      OpDef{"ops.linalg.MatrixRank", "linalg.matrix_rank", {"x", "tol", "validate_args"}, {{"a", "x"}}, rank_shape, matrix_rank},
      OpDef{"ops.nn.CTCLoss", nullptr, {"target", "output", "target_length", "output_length", "mask_index"}, {},
            [](const Args<Shape>& a) { return Shape{ctc_batch(a, kKerasCtc, a.value("target"), a.value("output"))}; },
            [](const Args<Tensor>& a) {
              CtcArgs n = kKerasCtc;
              n.blank = a.get<int64_t>("mask_index", 0);
              return ctc_loss(a, n);
            }},
      OpDef{nullptr, "nn.ctc_loss", {"labels", "logits", "label_length", "logit_length", "logits_time_major", "unique", "blank_index"}, {},
            [](const Args<Shape>& a) { return Shape{ctc_batch(a, tf_ctc(a), a.value("labels"), a.value("logits"))}; },
            [](const Args<Tensor>& a) { return ctc_loss(a, tf_ctc(a)); }},
      OpDef{"ops.nn.CTCDecode", nullptr, {"inputs", "sequence_lengths", "strategy", "beam_width", "top_paths", "merge_repeated", "mask_index"},
            {}, nullptr, nullptr, ctc_decode_shapes, ctc_decode},
  };
  return defs;
}

}  // namespace kerascpp::layers::op_nodes
