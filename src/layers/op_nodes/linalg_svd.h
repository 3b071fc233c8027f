// What the linalg op nodes that compute in double share (linalg_ops_decomposition.cpp's pinv / lstsq /
// matrix_rank, linalg_ops_factorizations.cpp's qr / lu): small dense matrices, and the thin singular
// value decomposition by one-sided Jacobi on the taller of A, A^T.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace kerascpp::layers::op_nodes::linalg {

// Small dense matrices in double, row-major, for the linalg op nodes' own factorizations and their
// gradients (linalg_ops_decomposition.cpp, linalg_ops_factorizations.cpp).
struct Mat {
  int64_t r = 0, c = 0;
  std::vector<double> v;
  Mat() = default;
  Mat(int64_t rows, int64_t cols) : r(rows), c(cols), v(rows * cols, 0.0) {}
  double& operator()(int64_t i, int64_t j) { return v[i * c + j]; }
  double operator()(int64_t i, int64_t j) const { return v[i * c + j]; }
};
inline Mat tr(const Mat& a) {
  Mat t(a.c, a.r);
  for (int64_t i = 0; i < a.r; ++i)
    for (int64_t j = 0; j < a.c; ++j) t(j, i) = a(i, j);
  return t;
}
inline Mat mul(const Mat& a, const Mat& b) {
  Mat p(a.r, b.c);
  for (int64_t i = 0; i < a.r; ++i)
    for (int64_t l = 0; l < a.c; ++l) {
      const double x = a(i, l);
      for (int64_t j = 0; j < b.c; ++j) p(i, j) += x * b(l, j);
    }
  return p;
}
inline Mat lin(const Mat& a, double s, const Mat& b) {  // a + s b
  Mat p = a;
  for (size_t i = 0; i < p.v.size(); ++i) p.v[i] += s * b.v[i];
  return p;
}


// A = U diag(s) V^T of a row-major r x c matrix: s descending (k = min(r, c) values), U (r x k) and
// V (c x k) row-major, their columns orthonormal (a zero singular value's U column is zero).
struct JacobiSvd {
  std::vector<double> s, u, v;
};
inline JacobiSvd jacobi_svd(const double* a, int64_t rows, int64_t cols) {
  const bool flip = rows < cols;  // decompose A^T = U S V^T, then A = V S U^T
  const int64_t r = flip ? cols : rows, c = flip ? rows : cols;
  auto w0 = [&](int64_t i, int64_t j) { return flip ? a[j * cols + i] : a[i * cols + j]; };
  std::vector<std::vector<double>> w(c, std::vector<double>(r)), v(c, std::vector<double>(c, 0.0));
  for (int64_t j = 0; j < c; ++j) {
    for (int64_t i = 0; i < r; ++i) w[j][i] = w0(i, j);
    v[j][j] = 1.0;
  }
  auto rotate = [](std::vector<double>& x, std::vector<double>& y, double cs, double sn) {
    for (size_t i = 0; i < x.size(); ++i) {
      const double p = x[i], q = y[i];
      x[i] = cs * p - sn * q;
      y[i] = sn * p + cs * q;
    }
  };
  for (int sweep = 0; sweep < 80; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < c; ++p)
      for (int64_t q = p + 1; q < c; ++q) {
        double al = 0, be = 0, ga = 0;
        for (int64_t i = 0; i < r; ++i) {
          al += w[p][i] * w[p][i];
          be += w[q][i] * w[q][i];
          ga += w[p][i] * w[q][i];
        }
        if (ga == 0.0 || std::abs(ga) <= 1e-15 * std::sqrt(al * be)) continue;
        rotated = true;
        const double zeta = (be - al) / (2.0 * ga);
        const double t = (zeta >= 0 ? 1.0 : -1.0) / (std::abs(zeta) + std::sqrt(1.0 + zeta * zeta));
        const double cs = 1.0 / std::sqrt(1.0 + t * t), sn = cs * t;
        rotate(w[p], w[q], cs, sn);
        rotate(v[p], v[q], cs, sn);
      }
    if (!rotated) break;
  }
  std::vector<double> norm(c);
  for (int64_t j = 0; j < c; ++j) norm[j] = std::sqrt(std::inner_product(w[j].begin(), w[j].end(), w[j].begin(), 0.0));
  std::vector<int64_t> order(c);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return norm[x] > norm[y]; });
  JacobiSvd out{std::vector<double>(c), std::vector<double>(r * c), std::vector<double>(c * c)};
  for (int64_t k = 0; k < c; ++k) {
    const int64_t j = order[k];
    out.s[k] = norm[j];
    for (int64_t i = 0; i < r; ++i) out.u[i * c + k] = norm[j] > 0 ? w[j][i] / norm[j] : 0.0;
    for (int64_t i = 0; i < c; ++i) out.v[i * c + k] = v[j][i];
  }
  if (flip) std::swap(out.u, out.v);
  return out;
}

}  // namespace kerascpp::layers::op_nodes::linalg
