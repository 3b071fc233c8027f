// The engine's thread pool for kerascpp's own loops: OpenMP's (libgomp), the runtime oneDNN already
// runs on, so that elementwise kernels, pooling gradients and oneDNN's convolutions take turns on the
// same threads instead of two pools spinning against each other (issue 21). A loop of fewer than two
// grains stays on the calling thread, as does one inside a parallel region, and every loop when the
// BLAS keeps a thread pool of its own (OpenBLAS's pthreads build; kernels::blas_shares_pool).
//
// Chunks are whole ranges [begin, end) of the caller's index, each run once, so a loop whose items
// are independent (an elementwise kernel, a pooling gradient per image) gives the same bits on any
// number of threads.
//
//   parallel_chunks(n, kElementwiseGrain, [&](int64_t b, int64_t e) { relu(x + b, y + b, e - b); });
#pragma once

#include <cstdint>
#include <type_traits>

namespace kerascpp::kernels {

// Elements of an elementwise loop worth a thread: below two of these a fork and join (a few us) costs
// more than the second thread saves.
constexpr int64_t kElementwiseGrain = int64_t{1} << 15;

namespace detail {
using ChunkBody = void (*)(void* body, int64_t begin, int64_t end);
// How many threads a loop of n items in grains of `grain` gets: kerascpp::num_threads(), or the calling
// thread's OpenMP count, at most n / grain; 1 inside a parallel region.
int threads_for(int64_t n, int64_t grain);
void run_chunks(int64_t n, int threads, int64_t align, ChunkBody run, void* body);
}  // namespace detail

// f(begin, end) over [0, n) in one chunk per thread; chunk bounds are multiples of `align` (but the last).
template <typename F>
void parallel_chunks(int64_t n, int64_t grain, F&& f, int64_t align = 16) {
  const int threads = n < 2 * grain ? 1 : detail::threads_for(n, grain);
  if (threads <= 1) return f(int64_t{0}, n);
  detail::run_chunks(
      n, threads, align, [](void* body, int64_t b, int64_t e) { (*static_cast<std::remove_reference_t<F>*>(body))(b, e); },
      &f);
}

}  // namespace kerascpp::kernels
