// Fast matmul: c: (m, n) = a: (m, k) @ b: (k, n), float32, row-major, contiguous.
//
// Two candidates, fastest first for their sizes, and a dispatch that can say why it picked one (a
// tiny version of oneDNN's explainable dispatch):
//   - small: a hand-written register-blocked loop (one version per instruction set, kernels/isa.h). Tiny
//   Dense layers (batch 1, 8 -> 10) are all call
//     overhead in BLAS; this loop has none.
//   - blas: OpenBLAS cblas_sgemm, packed and multi-threaded, for everything bigger.
//
//   kernels::matmul(a, b, c, m, n, k);
//   std::puts(kernels::matmul_choice(m, n, k));  // "small: m*n*k <= 2097152 (128^3): ..."
#pragma once

#include <cstdint>

namespace kerascpp::kernels {

enum class MatmulPath { small, blas };

// Products with m*n*k at or below this take the small path (measured, see matmul.cpp).
inline constexpr int64_t kMatmulSmallMaxWork = 128 * 128 * 128;

// The path matmul() takes for these sizes.
MatmulPath matmul_path(int64_t m, int64_t n, int64_t k);
// The same choice as a static sentence saying why, for verbose logs and tests.
const char* matmul_choice(int64_t m, int64_t n, int64_t k);

// Dispatching matmul. k == 0 writes zeros; m == 0 or n == 0 writes nothing.
void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);
// The candidates themselves, callable directly (tests check both against ref::matmul).
void matmul_small(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);
void matmul_blas(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);

// c: (m, n) = op(a) @ op(b), op transposing when asked: a is stored (k, m) when transpose_a, b is
// stored (n, k) when transpose_b. For the backward of matmul; m, n, k must fit in int.
void matmul_transposed(bool transpose_a, bool transpose_b, const float* a, const float* b, float* c,
                       int64_t m, int64_t n, int64_t k);

// The plain loop matmul_transposed takes for m*n*k <= kMatmulSmallMaxWork (tests call it directly).
void matmul_transposed_small(bool transpose_a, bool transpose_b, const float* a, const float* b, float* c,
                             int64_t m, int64_t n, int64_t k);

// Threads OpenBLAS may use inside one call (process-wide OpenBLAS setting; no-op, returning 1, when
// the linked BLAS is not OpenBLAS). See matmul.cpp for why kerascpp leaves the default alone.
void set_blas_threads(int n);
int blas_threads();

}  // namespace kerascpp::kernels
