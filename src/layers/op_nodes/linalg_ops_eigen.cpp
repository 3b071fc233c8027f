// Op nodes of the decompositions whose signs are Eigen's: keras.ops.linalg eigh and svd, and
// tf.linalg's eigh / eigvalsh / svd. TensorFlow's CPU kernels compute them with Eigen
// (SelfAdjointEigenSolver; BDCSVD, which hands small matrices to JacobiSVD), in float32; kerascpp calls
// the same Eigen solvers on the same float32 matrices (Debian's libeigen3-dev), so the eigenvectors'
// and singular vectors' signs are TensorFlow's. Every dim before the last two is a batch of matrices.
//
// Gradients are TensorFlow's formulas (linalg_grad.py _SelfAdjointEigV2Grad, _SvdGrad), computed in
// double: eigh's reaches the lower triangle only (the solver reads no other); svd's is refused where
// TensorFlow's is (full_matrices with |m - n| > 1).
#include <Eigen/Dense>
#include <Eigen/SVD>

#include "layers/op_nodes/op_node.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
namespace {

using MatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class T>
void expect_matrices(const Args<T>& a, const Shape& s, bool square) {
  KCPP_CHECK(s.size() >= 2, ValueError, a.who(), ": argument 'x' must have rank >= 2. Received: shape=", shape_str(s));
  if (square && s[s.size() - 1] >= 0 && s[s.size() - 2] >= 0 && s[s.size() - 1] != s[s.size() - 2])
    a.fail("x", "not a batch of square matrices (shape " + shape_str(s) + ")");
}
int64_t batch_of(const Tensor& x) { return x.size() / std::max<int64_t>(1, x.dim(-2) * x.dim(-1)); }
Shape lead(const Shape& s, std::initializer_list<int64_t> tail) {
  Shape out(s.begin(), s.end() - 2);
  out.insert(out.end(), tail);
  return out;
}
// The matrix q of a batch in a float32 tensor of matrices (r, c), as a double matrix.
MatD matrix(const Tensor& t, int64_t q, int64_t r, int64_t c) {
  return Eigen::Map<const MatF>(t.data<float>() + q * r * c, r, c).cast<double>();
}
// 1 / x where x is not near zero, as TensorFlow's _SafeReciprocal(x) = x / (x^2 + 1e-20).
double safe_reciprocal(double x) { return x / (x * x + 1e-20); }

// ---- eigh: eigenvalues ascending, eigenvectors in the columns.
std::vector<Shape> eigh_shapes(const Args<Shape>& a) {
  const Shape x = a.value("x");
  expect_matrices(a, x, true);
  const int64_t n = x.back();
  return {lead(x, {n}), x};
}
std::vector<Tensor> eigh(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  expect_matrices(a, x.shape(), true);
  const int64_t n = x.dim(-1), batch = batch_of(x);
  Tensor w = Tensor::empty(lead(x.shape(), {n})), v = Tensor::empty(x.shape());
  for (int64_t q = 0; q < batch; ++q) {
    Eigen::SelfAdjointEigenSolver<MatF> es(Eigen::Map<const MatF>(x.data<float>() + q * n * n, n, n));
    KCPP_CHECK(es.info() == Eigen::Success, ValueError, a.who(), ": the eigenvalue solver did not converge (matrix ", q, ")");
    Eigen::Map<Eigen::VectorXf>(w.data<float>() + q * n, n) = es.eigenvalues();
    Eigen::Map<MatF>(v.data<float>() + q * n * n, n, n) = es.eigenvectors();
  }
  if (ops::Recorder* r = ops::tape_for({&x})) {
    // One backward for both outputs: each output's record gives the gradient of its own dy.
    auto grad = [w, v, n, batch, shape = x.shape()](const Tensor& dw, const Tensor& dv) {
      Tensor dx = Tensor::zeros(shape);
      for (int64_t q = 0; q < batch; ++q) {
        const MatD V = matrix(v, q, n, n);
        const Eigen::VectorXd e = Eigen::Map<const Eigen::VectorXf>(w.data<float>() + q * n, n).cast<double>();
        MatD inner = MatD::Zero(n, n);
        if (dw.defined()) inner.diagonal() = Eigen::Map<const Eigen::VectorXf>(dw.data<float>() + q * n, n).cast<double>();
        if (dv.defined()) {
          const MatD vg = V.transpose() * matrix(dv, q, n, n);
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j)
              if (i != j) inner(i, j) += safe_reciprocal(e(j) - e(i)) * vg(i, j);
        }
        const MatD g = V * inner * V.transpose();
        MatD sym = g + g.transpose();  // the lower triangle, its diagonal halved
        float* o = dx.data<float>() + q * n * n;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j <= i; ++j) o[i * n + j] = static_cast<float>(i == j ? 0.5 * sym(i, j) : sym(i, j));
      }
      return ops::Grads{dx};
    };
    r->record("eigh", {x}, w, [grad](const Tensor& dy) { return grad(dy, Tensor()); });
    r->record("eigh", {x}, v, [grad](const Tensor& dy) { return grad(Tensor(), dy); });
  }
  return {w, v};
}
// tf.linalg.eigvalsh: the eigenvalues only.
Shape eigvalsh_shape(const Args<Shape>& a) { return eigh_shapes(a)[0]; }
Tensor eigvalsh(const Args<Tensor>& a) { return eigh(a)[0]; }

// ---- svd. Keras 3: (u, s, vh) with vh = v^T, or s alone with compute_uv=False; tf.linalg.svd: (s, u, v),
// or s alone.
template <class T>
bool compute_uv(const Args<T>& a) { return a.get("compute_uv", true); }
template <class T>
bool full_matrices(const Args<T>& a) { return a.get("full_matrices", a.keras3()); }  // tf's default: False
std::vector<Shape> svd_shapes(const Args<Shape>& a) {
  const Shape x = a.value("x");
  expect_matrices(a, x, false);
  const int64_t m = x[x.size() - 2], n = x.back();
  const int64_t k = m < 0 || n < 0 ? -1 : std::min(m, n);
  const Shape s = lead(x, {k});
  if (!compute_uv(a)) return {s};
  const bool full = full_matrices(a);
  const Shape u = lead(x, {m, full ? m : k}), v = lead(x, {n, full ? n : k}), vh = lead(x, {full ? n : k, n});
  return a.keras3() ? std::vector<Shape>{u, s, vh} : std::vector<Shape>{s, u, v};
}

// TensorFlow's _SvdGrad for one matrix (m x n) from s, u (m x ku), v (n x kv) and the outputs' gradients
// (zero matrices where an output has none).
MatD svd_grad(Eigen::VectorXd s, MatD u, MatD v, MatD gs_mat, MatD gu, MatD gv, bool full, const std::string& who) {
  int64_t m = u.rows(), n = v.rows();
  const bool adjoint = m > n;
  if (adjoint) std::swap(m, n), std::swap(u, v), std::swap(gu, gv);
  KCPP_CHECK(!(full && n - m > 1), NotImplementedError, who,
             ": TensorFlow's svd gradient (and kerascpp's) is not implemented for full_matrices=True with |m - n| > 1");
  const int64_t k = s.size();
  const MatD s_mat = s.asDiagonal();
  MatD f = MatD::Zero(k, k), s_inv = MatD::Zero(k, k);
  for (int64_t i = 0; i < k; ++i) {
    s_inv(i, i) = safe_reciprocal(s(i));
    for (int64_t j = 0; j < k; ++j)
      if (i != j) f(i, j) = safe_reciprocal(s(j) * s(j) - s(i) * s(i));
  }
  u = u.leftCols(k).eval(), gu = gu.leftCols(k).eval();  // u: m x m = m x k here (m <= n)
  const MatD v1 = v.leftCols(m), gv1 = gv.leftCols(m);
  const MatD f_u = f.cwiseProduct(u.transpose() * gu), f_v = f.cwiseProduct(v1.transpose() * gv1);
  const MatD term1 = u * (gs_mat + (f_u + f_u.transpose()) * s_mat + s_mat * (f_v + f_v.transpose())) * v1.transpose();
  MatD g = term1;
  if (m != n) {
    const MatD gv1t = gv1.transpose();
    MatD term2 = gv1t - (gv1t * v1) * v1.transpose();
    if (full && v.cols() > m) {
      const MatD v2 = v.rightCols(v.cols() - m), gv2 = gv.rightCols(v.cols() - m);
      term2 -= (v1.transpose() * gv2) * v2.transpose();
    }
    g += u * s_inv * term2;
  }
  return adjoint ? MatD(g.transpose()) : g;
}

std::vector<Tensor> svd(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  expect_matrices(a, x.shape(), false);
  const bool uv = compute_uv(a), full = full_matrices(a), keras3 = a.keras3();
  const int64_t m = x.dim(-2), n = x.dim(-1), k = std::min(m, n), batch = batch_of(x);
  const int64_t ku = uv && full ? m : k, kv = uv && full ? n : k;
  Tensor s = Tensor::empty(lead(x.shape(), {k}));
  Tensor u = Tensor::empty(lead(x.shape(), {m, ku})), v = Tensor::empty(lead(x.shape(), {n, kv}));
  const unsigned options = !uv ? 0u : full ? Eigen::ComputeFullU | Eigen::ComputeFullV : Eigen::ComputeThinU | Eigen::ComputeThinV;
  for (int64_t q = 0; q < batch; ++q) {
    Eigen::BDCSVD<MatF> d(Eigen::Map<const MatF>(x.data<float>() + q * m * n, m, n), uv ? options : Eigen::ComputeThinU | Eigen::ComputeThinV);
    Eigen::Map<Eigen::VectorXf>(s.data<float>() + q * k, k) = d.singularValues();
    // The vectors are kept for the gradient of s alone too (u diag(ds) v^T).
    const MatF du = d.matrixU(), dv = d.matrixV();
    Eigen::Map<MatF>(u.data<float>() + q * m * ku, m, ku) = du.leftCols(ku);
    Eigen::Map<MatF>(v.data<float>() + q * n * kv, n, kv) = dv.leftCols(kv);
  }
  const Tensor vh = keras3 && uv ? ops::transpose(v, [&] {
    std::vector<int> p(v.rank());
    for (int i = 0; i < v.rank(); ++i) p[i] = i;
    std::swap(p[p.size() - 1], p[p.size() - 2]);
    return p;
  }()) : Tensor();
  if (ops::Recorder* r = ops::tape_for({&x})) {
    // The gradient of each output alone (the tape adds them up), from TensorFlow's formula.
    auto grad = [=, who = a.who()](const Tensor& ds, const Tensor& du, const Tensor& dv) {
      Tensor dx = Tensor::zeros(x.shape());
      for (int64_t q = 0; q < batch; ++q) {
        const Eigen::VectorXd sv = Eigen::Map<const Eigen::VectorXf>(s.data<float>() + q * k, k).cast<double>();
        const MatD U = matrix(u, q, m, ku), V = matrix(v, q, n, kv);
        MatD gs = MatD::Zero(k, k);
        if (ds.defined()) gs.diagonal() = Eigen::Map<const Eigen::VectorXf>(ds.data<float>() + q * k, k).cast<double>();
        MatD g;
        if (!uv) {
          g = U.leftCols(k) * gs * V.leftCols(k).transpose();
        } else {
          const MatD gu = du.defined() ? matrix(du, q, m, ku) : MatD::Zero(m, ku);
          const MatD gv = dv.defined() ? matrix(dv, q, n, kv) : MatD::Zero(n, kv);
          g = svd_grad(sv, U, V, gs, gu, gv, full, who);
        }
        Eigen::Map<MatF>(dx.data<float>() + q * m * n, m, n) = g.cast<float>();
      }
      return ops::Grads{dx};
    };
    r->record("svd", {x}, s, [grad](const Tensor& dy) { return grad(dy, Tensor(), Tensor()); });
    if (uv) {
      r->record("svd", {x}, u, [grad](const Tensor& dy) { return grad(Tensor(), dy, Tensor()); });
      if (keras3) {
        r->record("svd", {x}, vh, [grad](const Tensor& dy) {
          std::vector<int> p(dy.rank());
          for (int i = 0; i < dy.rank(); ++i) p[i] = i;
          std::swap(p[p.size() - 1], p[p.size() - 2]);
          return grad(Tensor(), Tensor(), ops::transpose(dy, p));
        });
      } else {
        r->record("svd", {x}, v, [grad](const Tensor& dy) { return grad(Tensor(), Tensor(), dy); });
      }
    }
  }
  if (!uv) return {s};
  return keras3 ? std::vector<Tensor>{u, s, vh} : std::vector<Tensor>{s, u, v};
}

}  // namespace

std::vector<OpDef> eigen_ops() {
  OpDef eig{"ops.linalg.Eigh", "linalg.eigh|linalg.self_adjoint_eig|self_adjoint_eig", {"x"}, {{"tensor", "x"}}, nullptr, nullptr};
  eig.shapes = eigh_shapes;
  eig.calls = eigh;
  OpDef sv{"ops.linalg.SVD", "linalg.svd|svd", {"x", "full_matrices", "compute_uv"}, {{"tensor", "x"}}, nullptr, nullptr};
  sv.shapes = svd_shapes;
  sv.calls = svd;
  return {eig, sv, OpDef{nullptr, "linalg.eigvalsh|self_adjoint_eigvals", {"x"}, {{"tensor", "x"}}, eigvalsh_shape, eigvalsh}};
}

}  // namespace kerascpp::layers::op_nodes
