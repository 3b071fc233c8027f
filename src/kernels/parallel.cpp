#include "kernels/parallel.h"

#include <algorithm>

#include "kerascpp/threading.h"
#include "kernels/matmul.h"

// libgomp's (linked for oneDNN); declared here so that a compiler without OpenMP (clang without
// libomp, the fuzzing build) compiles this file with the pragma ignored: one chunk, on the caller.
extern "C" {
int omp_in_parallel(void);
int omp_get_max_threads(void);
int omp_get_num_threads(void);
int omp_get_thread_num(void);
}

namespace kerascpp::kernels::detail {

int threads_for(int64_t n, int64_t grain) {
  // Inside a parallel region; or beside a BLAS with a thread pool of its own, whose threads spin
  // after each product and would fight OpenMP's for the cores (measured: an MLP's epoch 2.5x slower).
  if (omp_in_parallel() || !blas_shares_pool()) return 1;
  const int set = num_threads();  // kerascpp/threading.h; 0: OpenMP's count for this thread
  return static_cast<int>(std::min<int64_t>(set > 0 ? set : omp_get_max_threads(), std::max<int64_t>(1, n / grain)));
}

void run_chunks(int64_t n, int threads, int64_t align, ChunkBody run, void* body) {
#pragma omp parallel num_threads(threads)
  {
    const int64_t k = omp_get_num_threads(), t = omp_get_thread_num();
    auto bound = [&](int64_t i) { return i == k ? n : std::min(n, n * i / k / align * align); };
    const int64_t b = bound(t), e = bound(t + 1);
    if (b < e) run(body, b, e);
  }
}

}  // namespace kerascpp::kernels::detail
