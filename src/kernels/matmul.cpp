// Fast matmul: a register-blocked loop for small products (kernels/isa/matmul_small.cpp, one version per
// instruction set, see kernels/isa.h), OpenBLAS for the rest.
//
// Dispatch rule (the candidates' refusals): m*n*k <= kMatmulSmallMaxWork (128^3), or n*k <= kMatmulSmallMaxB
// (128^2, b in L2) up to m*n*k <= kMatmulSmallMaxBWork (1024 * 128^2), takes the small path. Measured on the build
// machine (2 vCPU AMD EPYC, AVX2, OpenBLAS 0.3.21 pthreads; best of 5 runs on a shared, noisy box):
//   batch 1, 8 -> 10 (1x10x8):  small 22-45 ns,    cblas_sgemm 120-230 ns
//   8x10x8:                     small 55-160 ns,   cblas_sgemm 150-290 ns
//   32x32x32:                   small 0.9-1.3 us,  cblas_sgemm 1.5-4 us
//   128x128x128:                small 54-60 us,    cblas_sgemm 60-100 us
//   256x512x512:                small 1.7-2.5 ms,  cblas_sgemm 1.6-2.4 ms (up to 82 GFLOP/s)
// The small loop keeps up with OpenBLAS on one core to 128^3; above it OpenBLAS's cache blocking
// (packed a in L2) and its thread pool win, as does its gemv-like path at m == 1 with large n*k.
// Except while b is small: a Dense layer of up to 128 x 128, up to m*n*k = 1024 * 128^2 (a batch of 1,024
// for 128 x 128, 4,096 for 64 x 64; issue 20, 2-core AMD EPYC with AVX-512, best of 200, OpenBLAS at 1 /
// 2 threads). Nothing was measured beyond that cap: bigger products stay with OpenBLAS as before, whose
// threads a machine with more cores has.
//   1024x64x64:    small 74 us,   cblas_sgemm 86 / 169 us
//   1024x128x128:  small 293 us,  cblas_sgemm 326 / 381 us
//   256x256x256:   small 295 us,  cblas_sgemm 318 / 243 us   (b of 64K floats: OpenBLAS)
//   32x512x512:    small 183 us,  cblas_sgemm 185 / 114 us
//
// Threads: both paths are safe from any number of threads at once (tested). The small path touches
// no shared state. OpenBLAS 0.3.21 (pthreads) runs products below 64^3 on the caller's thread;
// bigger ones go to its own pool, and concurrent callers of those queue on a lock in its level-3
// driver. Measured here with 8 threads each running 256x512x512: 62-101 GFLOP/s aggregate with
// OpenBLAS at its default 2 threads, 67-112 with 1 thread (oversubscription costs ~10% on 2 vCPUs;
// not measured on more cores). kerascpp leaves OpenBLAS's process-wide setting alone (a library should
// not change it behind the application's back, and one caller running a big layer wants the
// threads); servers running many predicts at once should call set_blas_threads(1) (or set
// OPENBLAS_NUM_THREADS=1) so that each call computes on its own thread instead of queueing.
#include "kernels/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <iterator>

#include "kernels/dispatch_log.h"
#include "kernels/parallel.h"
#include "kernels/ref/ref.h"

// Weak, so that kerascpp still links against a BLAS that is not OpenBLAS.
extern "C" {
void openblas_set_num_threads(int num_threads) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
int openblas_get_parallel(void) __attribute__((weak));  // 0 sequential, 1 pthreads, 2 OpenMP
}

namespace kerascpp::kernels {

namespace {

const char* small_refuses(int64_t m, int64_t n, int64_t k) {
  static_assert(kMatmulSmallMaxWork == 2097152 && kMatmulSmallMaxB == 16384 && kMatmulSmallMaxBWork == 16777216,
                "update the sentence below");
  // In double: the int64 product of three large dims could overflow.
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (work <= static_cast<double>(kMatmulSmallMaxWork)) return nullptr;
  if (static_cast<double>(n) * static_cast<double>(k) <= static_cast<double>(kMatmulSmallMaxB) &&
      work <= static_cast<double>(kMatmulSmallMaxBWork))
    return nullptr;
  return "m*n*k > 2097152 (128^3), and n*k > 16384 (128^2) or m*n*k > 16777216 (1024 * 128^2): OpenBLAS's "
         "cache-blocked packing and thread pool are faster";
}

const char* blas_refuses(int64_t, int64_t n, int64_t k) {
  // cblas takes int sizes: matmul_blas splits m, but not n or k (ops check them for Keras tensors).
  if (n > INT_MAX || k > INT_MAX) return "n or k > INT_MAX: cblas takes int sizes";
  return nullptr;
}

void run_ref(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  ref::matmul(a, b, c, m, n, k);
}

constexpr MatmulCandidate kCandidates[] = {
    {"small", matmul_small, small_refuses},
    {"blas", matmul_blas, blas_refuses},
    {"ref", run_ref, nullptr},
};

const MatmulCandidate& first_taking(int64_t m, int64_t n, int64_t k) {
  for (const MatmulCandidate& c : kCandidates)
    if (c.refuses == nullptr || c.refuses(m, n, k) == nullptr) return c;
  return kCandidates[std::size(kCandidates) - 1];
}

}  // namespace

std::span<const MatmulCandidate> matmul_candidates() { return kCandidates; }

bool matmul_takes_small(int64_t m, int64_t n, int64_t k) { return small_refuses(m, n, k) == nullptr; }

MatmulChoice matmul_choice(int64_t m, int64_t n, int64_t k) {
  MatmulChoice choice{&first_taking(m, n, k), ""};
  for (const MatmulCandidate& c : kCandidates) {
    if (&c == choice.candidate) break;
    choice.refusals += (choice.refusals.empty() ? "" : "; ") + std::string(c.name) + ": " + c.refuses(m, n, k);
  }
  return choice;
}

void matmul_blas(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS would reject lda = 0
    std::memset(c, 0, sizeof(float) * m * n);
    return;
  }
  // cblas takes int sizes; split the rows so that each call fits (the op checks that n and k do).
  const int64_t rows = INT_MAX;
  for (int64_t i0 = 0; i0 < m; i0 += rows) {
    int mi = static_cast<int>(std::min(rows, m - i0));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, static_cast<int>(n), static_cast<int>(k), 1.f,
                a + i0 * k, static_cast<int>(k), b, static_cast<int>(n), 0.f, c + i0 * n,
                static_cast<int>(n));
  }
}

void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  const MatmulCandidate& chosen = first_taking(m, n, k);
  if (dispatch_verbose()) {
    const std::string problem = "(" + std::to_string(m) + ", " + std::to_string(k) + ") @ (" + std::to_string(k) +
                                ", " + std::to_string(n) + ")";
    log_dispatch_once("matmul", problem, chosen.name, matmul_choice(m, n, k).refusals);
  }
  chosen.run(a, b, c, m, n, k);
}

void matmul_bias(const float* a, const float* b, const float* bias, bool relu, float* c, int64_t m, int64_t n,
                 int64_t k) {
  if (small_refuses(m, n, k) == nullptr) {
    if (dispatch_verbose())
      log_dispatch_once("matmul_bias", "(" + std::to_string(m) + ", " + std::to_string(k) + ") @ (" +
                        std::to_string(k) + ", " + std::to_string(n) + ")", "small", "");
    return matmul_small_bias(a, b, bias, relu, c, m, n, k);
  }
  matmul(a, b, c, m, n, k);
  if (!bias && !relu) return;
  // Then the bias and relu over the product's rows, on the threads (each element on its own: the same
  // bits on any number of threads). A recurrent layer's projections of every step are 21 MB at a batch
  // of 1,024.
  const int64_t grain_rows = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
  parallel_chunks(
      m, grain_rows,
      [&](int64_t first, int64_t end) {
        for (int64_t i = first; i < end; ++i) {
          float* ci = c + i * n;
          if (bias)
            for (int64_t j = 0; j < n; ++j) ci[j] = ci[j] + bias[j];
          if (relu)
            for (int64_t j = 0; j < n; ++j) ci[j] = ci[j] < 0.f ? 0.f : ci[j];
        }
      },
      1);
}

void set_blas_threads(int n) {
  if (openblas_set_num_threads) openblas_set_num_threads(std::max(1, n));
}

int blas_threads() { return openblas_get_num_threads ? openblas_get_num_threads() : 1; }

bool blas_shares_pool() {
  if (!openblas_get_parallel) return false;  // not OpenBLAS: its threading is unknown
  return openblas_get_parallel() != 1 || blas_threads() <= 1;
}

// The backward products of a matmul: a or b read transposed (row-major, stored as (k, m) / (n, k)).
// Sizes are checked by the op (they are the forward's); cblas does the transposes for free.
void matmul_transposed(bool transpose_a, bool transpose_b, const float* a, const float* b, float* c,
                       int64_t m, int64_t n, int64_t k) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::memset(c, 0, sizeof(float) * m * n);
    return;
  }
  const bool small = m * n * k <= kMatmulSmallMaxWork;
  if (dispatch_verbose()) {
    const std::string problem = std::string(transpose_a ? "T" : "") + "(" + std::to_string(m) + ", " +
                                std::to_string(k) + ") @ " + (transpose_b ? "T" : "") + "(" + std::to_string(k) +
                                ", " + std::to_string(n) + ")";
    log_dispatch_once("matmul_transposed", problem, small ? "small" : "blas",
                      small ? "" : "small: m*n*k > 2097152 (128^3): OpenBLAS's cache-blocked packing and thread pool are faster");
  }
  if (small) {
    // Small products (a Dense layer's backward at training batch sizes): a plain loop (in
    // kernels/isa/matmul_small.cpp). OpenBLAS's threads cost more than they save here, and on a machine
    // also running oneDNN's OpenMP threads they spin against each other (measured: a small CNN's epoch
    // 20% faster this way).
    matmul_transposed_small(transpose_a, transpose_b, a, b, c, m, n, k);
    return;
  }
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.f, a,
              static_cast<int>(transpose_a ? m : k), b, static_cast<int>(transpose_b ? k : n), 0.f, c,
              static_cast<int>(n));
}

}  // namespace kerascpp::kernels
