// Linear algebra op nodes whose outputs are a factorization, as TensorFlow's CPU kernels (Eigen)
// compute it: keras.ops.linalg qr (reduced / complete) / lu_factor and tf.linalg.qr / lu (eigh and svd:
// linalg_ops_eigen.cpp, which calls Eigen itself). Over the last two dims, every leading dim a batch;
// computed in double precision, returned as float32.
//
// - qr: Eigen's HouseholderQR (TF's QrOp): per column j the reflector of makeHouseholder, beta =
//   -sign(c0) * sqrt(c0^2 + |tail|^2) (c0 >= 0 counts as positive), tau = (beta - c0) / beta, and no
//   reflection (tau = 0, beta = c0) where the tail's squared norm is <= the smallest normal float32
//   (always so for a square matrix's last column), so R's diagonal and Q's columns have TF's signs;
//   Q = H_0 ... H_{k-1} applied to the identity. Its gradient is TF's QrGrad (arXiv 2009.10071): m >= n
//   reduced, and m < n through the square case; TF has none for mode "complete" with m > n.
// - lu: Eigen's PartialPivLU: per column the row of the largest |value| at or below the diagonal (the
//   first on ties), swapped up, L's multipliers below the diagonal (unit diagonal implied) and U on and
//   above it in one matrix. tf.linalg.lu's p is the permutation with A[p] = L U; Keras's lu_factor
//   returns its inverse (tf.math.invert_permutation), of one matrix only (that TF op fails on a batch,
//   so a batch is refused). Indices are carried as float32. TF registers no gradient for Lu: asking
//   for one throws.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "layers/op_nodes/linalg_svd.h"
#include "layers/op_nodes/op_node.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
namespace {

// ---- small dense matrices in double, row-major.
using linalg::Mat;
using linalg::lin;
using linalg::mul;
using linalg::tr;

Mat cols(const Mat& a, int64_t from, int64_t to) {  // a[:, from:to]
  Mat p(a.r, to - from);
  for (int64_t i = 0; i < a.r; ++i)
    for (int64_t j = from; j < to; ++j) p(i, j - from) = a(i, j);
  return p;
}

// A tensor (..., r, c) as its matrices, and back.
std::vector<Mat> matrices(const Tensor& t) {
  const int64_t r = t.dim(-2), c = t.dim(-1), n = r * c == 0 ? 0 : t.size() / (r * c);
  std::vector<Mat> out(n, Mat(r, c));
  for (int64_t q = 0; q < n; ++q) std::copy(t.data<float>() + q * r * c, t.data<float>() + (q + 1) * r * c, out[q].v.begin());
  return out;
}
Tensor tensor(const std::vector<Mat>& ms, const Shape& shape) {
  Tensor t = Tensor::empty(shape);
  int64_t k = 0;
  for (const Mat& m : ms)
    for (double x : m.v) t.data<float>()[k++] = static_cast<float>(x);
  return t;
}
// The shape (..., m, n) with its last two dims replaced by `last` (one or two dims).
Shape with_last(const Shape& s, std::initializer_list<int64_t> last) {
  Shape out(s.begin(), s.end() - 2);
  out.insert(out.end(), last);
  return out;
}
int64_t min_dim(int64_t m, int64_t n) { return m < 0 || n < 0 ? -1 : std::min(m, n); }
template <class T>
void expect_matrices(const Args<T>& a, const Shape& s, const char* name) {
  if (s.size() < 2) a.fail(name, "a tensor of rank >= 2 (..., M, N). Its shape is " + shape_str(s));
}
// Records y's backward, which throws: TensorFlow has no gradient there.
void no_gradient(const Tensor& x, const Tensor& y, const std::string& who, const std::string& why) {
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("no_gradient", {x}, y, [who, why](const Tensor&) -> ops::Grads {
      KCPP_THROW(NotImplementedError, who, " has no gradient in kerascpp: ", why);
    });
}

// ---- QR as Eigen's HouseholderQR computes it.
struct Qr {
  Mat q, r;
};
Qr householder_qr(const Mat& a, bool complete) {
  const int64_t m = a.r, n = a.c, k = std::min(m, n);
  Mat w = a;
  std::vector<std::vector<double>> ess(k);  // each reflector's v below its leading 1
  std::vector<double> tau(k, 0.0);
  const double tol = std::numeric_limits<float>::min();  // TF's float32 kernel: its smallest normal
  for (int64_t j = 0; j < k; ++j) {
    const double c0 = w(j, j);
    double tail = 0;
    for (int64_t i = j + 1; i < m; ++i) tail += w(i, j) * w(i, j);
    std::vector<double>& e = ess[j];
    e.assign(m - j - 1, 0.0);
    double beta = c0;
    if (tail > tol) {
      beta = std::sqrt(c0 * c0 + tail);
      if (c0 >= 0) beta = -beta;
      for (int64_t i = j + 1; i < m; ++i) e[i - j - 1] = w(i, j) / (c0 - beta);
      tau[j] = (beta - c0) / beta;
    }
    for (int64_t l = j + 1; l < n; ++l) {  // H_j = I - tau v v^T on the columns to the right
      double s = w(j, l);
      for (int64_t i = j + 1; i < m; ++i) s += e[i - j - 1] * w(i, l);
      w(j, l) -= tau[j] * s;
      for (int64_t i = j + 1; i < m; ++i) w(i, l) -= tau[j] * e[i - j - 1] * s;
    }
    w(j, j) = beta;
  }
  const int64_t qc = complete ? m : k, rr = complete ? m : k;
  Qr out{Mat(m, qc), Mat(rr, n)};
  for (int64_t i = 0; i < std::min(m, qc); ++i) out.q(i, i) = 1.0;
  for (int64_t j = k - 1; j >= 0; --j) {
    const std::vector<double>& e = ess[j];
    for (int64_t l = 0; l < qc; ++l) {
      double s = out.q(j, l);
      for (int64_t i = j + 1; i < m; ++i) s += e[i - j - 1] * out.q(i, l);
      out.q(j, l) -= tau[j] * s;
      for (int64_t i = j + 1; i < m; ++i) out.q(i, l) -= tau[j] * e[i - j - 1] * s;
    }
  }
  for (int64_t i = 0; i < std::min(rr, k); ++i)
    for (int64_t l = i; l < n; ++l) out.r(i, l) = w(i, l);
  return out;
}
// x R^-T for R upper triangular (k x k): each row z of the result solves R z^T = x^T.
Mat times_inv_rt(const Mat& x, const Mat& r) {
  const int64_t k = r.r;
  Mat z(x.r, k);
  for (int64_t p = 0; p < x.r; ++p)
    for (int64_t i = k - 1; i >= 0; --i) {
      double s = x(p, i);
      for (int64_t j = i + 1; j < k; ++j) s -= r(i, j) * z(p, j);
      z(p, i) = s / r(i, i);
    }
  return z;
}
// TF's _QrGradSquareAndDeepMatrices: Q (m x k), R (k x k), m >= k.
Mat qr_grad_deep(const Mat& q, const Mat& r, const Mat& dq, const Mat& dr) {
  const Mat qdq = mul(tr(q), dq), rdr = mul(r, tr(dr));
  Mat low = lin(lin(qdq, -1.0, tr(qdq)), 1.0, lin(rdr, -1.0, tr(rdr)));
  for (int64_t i = 0; i < low.r; ++i)
    for (int64_t j = i + 1; j < low.c; ++j) low(i, j) = 0.0;
  const Mat ga = mul(q, lin(dr, 1.0, times_inv_rt(low, r)));
  return lin(ga, 1.0, times_inv_rt(lin(dq, -1.0, mul(q, qdq)), r));
}
// TF's QrGrad for A (m x n): m >= n directly; m < n by A = [X, Y], R = [U, V].
Mat qr_grad(const Mat& a, const Mat& q, const Mat& r, const Mat& dq, const Mat& dr) {
  const int64_t m = a.r, n = a.c;
  if (m >= n) return qr_grad_deep(q, r, dq, dr);
  const Mat y = cols(a, m, n), dv = cols(dr, m, n);
  const Mat dx = qr_grad_deep(q, cols(r, 0, m), lin(dq, 1.0, mul(y, tr(dv))), cols(dr, 0, m));
  const Mat dy = mul(q, dv);
  Mat out(m, n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < m; ++j) out(i, j) = dx(i, j);
    for (int64_t j = m; j < n; ++j) out(i, j) = dy(i, j - m);
  }
  return out;
}

template <class T>
bool qr_complete(const Args<T>& a) {
  if (a.keras3()) {
    const std::string mode = a.template get<std::string>("mode", "reduced");
    if (mode != "reduced" && mode != "complete") a.fail("mode", "'reduced' or 'complete'");
    return mode == "complete";
  }
  return a.get("full_matrices", false);
}
std::vector<Shape> qr_shapes(const Args<Shape>& a) {
  const Shape x = a.value("x");
  expect_matrices(a, x, "x");
  const int64_t m = x[x.size() - 2], n = x.back(), k = min_dim(m, n);
  if (qr_complete(a)) return {with_last(x, {m, m}), x};
  return {with_last(x, {m, k}), with_last(x, {k, n})};
}
std::vector<Tensor> qr(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  expect_matrices(a, x.shape(), "x");
  const bool complete = qr_complete(a);
  const int64_t m = x.dim(-2), n = x.dim(-1), k = std::min(m, n);
  const std::vector<Mat> as = matrices(x);
  std::vector<Mat> qs, rs;
  for (const Mat& am : as) {
    Qr f = householder_qr(am, complete);
    qs.push_back(std::move(f.q));
    rs.push_back(std::move(f.r));
  }
  const Tensor tq = tensor(qs, with_last(x.shape(), {m, complete ? m : k}));
  const Tensor tr_ = tensor(rs, with_last(x.shape(), {complete ? m : k, n}));
  if (complete && m > n) {
    const std::string why = "TensorFlow's QrGrad is not defined for mode='complete' (full_matrices=True) with more rows than "
                            "columns (" + std::to_string(m) + " > " + std::to_string(n) + ")";
    no_gradient(x, tq, a.who(), why);
    no_gradient(x, tr_, a.who(), why);
    return {tq, tr_};
  }
  if (ops::Recorder* r = ops::tape_for({&x})) {
    // The backward is linear in (dQ, dR): each output's part with the other's gradient zero.
    auto backward = [as, qs, rs, shape = x.shape()](bool of_q) {
      return [as, qs, rs, shape, of_q](const Tensor& dy) {
        const std::vector<Mat> g = matrices(dy);
        std::vector<Mat> da;
        for (size_t i = 0; i < as.size(); ++i) {
          const Mat zq(qs[i].r, qs[i].c), zr(rs[i].r, rs[i].c);
          da.push_back(qr_grad(as[i], qs[i], rs[i], of_q ? g[i] : zq, of_q ? zr : g[i]));
        }
        return ops::Grads{tensor(da, shape)};
      };
    };
    r->record("qr_q", {x}, tq, backward(true));
    r->record("qr_r", {x}, tr_, backward(false));
  }
  return {tq, tr_};
}

// ---- LU with partial pivoting as Eigen's PartialPivLU computes it.
std::vector<Shape> lu_shapes(const Args<Shape>& a) {
  const Shape x = a.value("x");
  expect_matrices(a, x, "x");
  if (a.keras3() && x.size() > 2)
    KCPP_THROW(NotImplementedError, a.who(), ": argument 'x' of shape ", shape_str(x), " (a batch of matrices) is not supported by "
               "kerascpp: Keras's TensorFlow backend inverts the permutation with tf.math.invert_permutation, which takes one "
               "permutation and fails on a batch, so there is no result to match (one matrix, or tf.linalg.lu, is supported)");
  if (a.has("output_idx_type")) {
    const std::string t = a.template get<std::string>("output_idx_type", "int32");
    if (t != "int32" && t != "int64") a.fail("output_idx_type", "'int32' or 'int64'");
  }
  const int64_t m = x[x.size() - 2], n = x.back();
  if (m >= 0 && n >= 0 && m != n) a.fail("x", "a square matrix (..., M, M) (TensorFlow's LU). Its shape is " + shape_str(x));
  return {x, Shape(x.begin(), x.end() - 1)};
}
std::vector<Tensor> lu_factor(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  lu_shapes(Args<Shape>(Json::object({{"x", Json{{"kerascpp_input", 0}}}}), {x.shape()}, a.who(), a.keras3()));
  const int64_t n = x.dim(-1);
  std::vector<Mat> ws = matrices(x);
  Tensor perm = Tensor::empty(Shape(x.shape().begin(), x.shape().end() - 1));
  for (size_t q = 0; q < ws.size(); ++q) {
    Mat& w = ws[q];
    std::vector<int64_t> p(n);
    std::iota(p.begin(), p.end(), 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t piv = k;
      for (int64_t i = k + 1; i < n; ++i)
        if (std::abs(w(i, k)) > std::abs(w(piv, k))) piv = i;
      if (w(piv, k) != 0.0) {
        if (piv != k) {
          for (int64_t l = 0; l < n; ++l) std::swap(w(k, l), w(piv, l));
          std::swap(p[k], p[piv]);
        }
        for (int64_t i = k + 1; i < n; ++i) w(i, k) /= w(k, k);
      }
      for (int64_t i = k + 1; i < n; ++i)
        for (int64_t l = k + 1; l < n; ++l) w(i, l) -= w(i, k) * w(k, l);
    }
    float* out = perm.data<float>() + q * n;
    for (int64_t i = 0; i < n; ++i) {
      if (a.keras3()) out[p[i]] = static_cast<float>(i);  // tf.math.invert_permutation(p)
      else out[i] = static_cast<float>(p[i]);
    }
  }
  const Tensor lu = tensor(ws, x.shape());
  no_gradient(x, lu, a.who(), "TensorFlow registers no gradient for its Lu op");
  return {lu, perm};
}

}  // namespace

std::vector<OpDef> factorization_ops() {
  return {
      OpDef{"ops.linalg.Qr", nullptr, {"x", "mode"}, {}, nullptr, nullptr, qr_shapes, qr},
      OpDef{nullptr, "linalg.qr", {"x", "full_matrices"}, {{"input", "x"}}, nullptr, nullptr, qr_shapes, qr},
      OpDef{"ops.linalg.LuFactor", "linalg.lu", {"x", "output_idx_type"}, {{"input", "x"}}, nullptr, nullptr, lu_shapes, lu_factor},
  };
}

}  // namespace kerascpp::layers::op_nodes
