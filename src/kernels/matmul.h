// Fast matmul: c: (m, n) = a: (m, k) @ b: (k, n), float32, row-major, contiguous.
//
// The candidates, in one ordered list, fastest first; the first that does not refuse a problem computes
// it, and a refusal says why (a tiny version of oneDNN's explainable dispatch):
//   - small: a hand-written register-blocked loop (one version per instruction set, kernels/isa.h). Tiny
//     Dense layers (batch 1, 8 -> 10) are all call overhead in BLAS; this loop has none.
//   - blas: OpenBLAS cblas_sgemm, packed and multi-threaded, for everything bigger.
//   - ref: ref::matmul, the definition, last; it takes what BLAS's int sizes cannot.
// KERASCPP_VERBOSE=dispatch prints each problem's choice once per process (kernels/dispatch_log.h).
//
//   kernels::matmul(a, b, c, m, n, k);
//   MatmulChoice why = kernels::matmul_choice(m, n, k);  // why.candidate->name: "small"
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace kerascpp::kernels {

// Products with m*n*k at or below this take the small path (measured, see matmul.cpp)...
inline constexpr int64_t kMatmulSmallMaxWork = 128 * 128 * 128;
// ...and so do products whose b has at most kMatmulSmallMaxB floats (64 KB: it stays in L2 while the
// rows of a stream past it) up to kMatmulSmallMaxBWork: beyond that, OpenBLAS's threads split m.
inline constexpr int64_t kMatmulSmallMaxB = 128 * 128;
inline constexpr int64_t kMatmulSmallMaxBWork = 1024 * 128 * 128;

struct MatmulCandidate {
  const char* name;
  void (*run)(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);
  // Why this candidate does not take these sizes (a static sentence), or nullptr when it does.
  const char* (*refuses)(int64_t m, int64_t n, int64_t k);
};
// Fastest first; ref last, refusing nothing. Tests check every candidate against ref.
std::span<const MatmulCandidate> matmul_candidates();

// The candidate matmul() takes for these sizes and the refusals of those listed before it.
struct MatmulChoice {
  const MatmulCandidate* candidate;
  std::string refusals;  // "small: m*n*k > 2097152 (128^3): ..." ("" when the first one takes it)
};
MatmulChoice matmul_choice(int64_t m, int64_t n, int64_t k);
// Whether matmul takes these sizes on the small path (matmul_choice's first candidate, without the
// refusals' text).
bool matmul_takes_small(int64_t m, int64_t n, int64_t k);

// Dispatching matmul. k == 0 writes zeros; m == 0 or n == 0 writes nothing.
void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);
// c = a @ b + bias (bias may be null), clamped at 0 when relu: the same floats as matmul, then
// bias_add, then relu (each rounding once, in that order), in one pass over c. The small path adds and
// clamps in registers before it stores; the others do it after the product, its rows split between the
// threads. For Dense layers in inference plans (models/plan_steps.cpp) and recurrent layers' projections
// (RnnCell::fast_project).
void matmul_bias(const float* a, const float* b, const float* bias, bool relu, float* c, int64_t m, int64_t n,
                 int64_t k);
// The candidates themselves, callable directly.
void matmul_small(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);
// The small candidate with matmul_bias's epilogue (matmul_small is this with no bias and no relu).
void matmul_small_bias(const float* a, const float* b, const float* bias, bool relu, float* c, int64_t m, int64_t n,
                       int64_t k);
void matmul_blas(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);

// c: (m, n) = op(a) @ op(b), op transposing when asked: a is stored (k, m) when transpose_a, b is
// stored (n, k) when transpose_b. For the backward of matmul; m, n, k must fit in int.
void matmul_transposed(bool transpose_a, bool transpose_b, const float* a, const float* b, float* c,
                       int64_t m, int64_t n, int64_t k);

// The plain loop matmul_transposed takes for m*n*k <= kMatmulSmallMaxWork, its rows split between the
// engine's threads (each element of c computed as on one thread).
void matmul_transposed_small(bool transpose_a, bool transpose_b, const float* a, const float* b, float* c,
                             int64_t m, int64_t n, int64_t k);
// Rows [row_begin, row_end) of that product (per instruction set).
void matmul_transposed_small_rows(bool transpose_a, bool transpose_b, const float* a, const float* b, float* c,
                                  int64_t m, int64_t n, int64_t k, int64_t row_begin, int64_t row_end);

// Threads OpenBLAS may use inside one call (process-wide OpenBLAS setting; no-op, returning 1, when
// the linked BLAS is not OpenBLAS). See matmul.cpp for why kerascpp leaves the default alone.
void set_blas_threads(int n);
int blas_threads();
// Whether the BLAS computes on OpenMP's threads (OpenBLAS's OpenMP build), on the caller's only
// (sequential, or one thread), so that kerascpp's own parallel loops may use OpenMP's pool without
// spinning against a pool of its own (kernels/parallel.h): false for OpenBLAS's pthreads build on
// several threads and for a BLAS that cannot tell.
bool blas_shares_pool();

}  // namespace kerascpp::kernels
