// kerascpp/threading.h: the thread count, kept as a number the parallel loops (kernels/parallel.cpp)
// and the oneDNN calls (kernels/dnnl_conv.cpp) read per call; OpenBLAS keeps its own copy.
#include "kerascpp/threading.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "kerascpp/error.h"
#include "kerascpp/warnings.h"
#include "kernels/matmul.h"

namespace kerascpp {
namespace {

constexpr int kUnread = -1;
std::atomic<int> threads{kUnread};

// KERASCPP_NUM_THREADS: a positive count, or ignored with a warning (the default kept) when it is not one.
int from_environment() {
  const char* env = std::getenv("KERASCPP_NUM_THREADS");
  if (env == nullptr || *env == '\0') return 0;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  if (*end == '\0' && n > 0 && n <= 4096) return static_cast<int>(n);
  warn("KERASCPP_NUM_THREADS=\"" + std::string(env) + "\" is not a thread count (1 to 4096): ignored, so the "
       "default applies (OMP_NUM_THREADS, else every core)");
  return 0;
}

}  // namespace

void set_num_threads(int n) {
  KCPP_CHECK(n >= 0, ValueError, "set_num_threads expects a count >= 0 (0: the environment's). Received: ", n);
  threads.store(n, std::memory_order_relaxed);
  if (n > 0) kernels::set_blas_threads(n);
}

int num_threads() {
  int n = threads.load(std::memory_order_relaxed);
  if (n != kUnread) return n;
  n = from_environment();
  int expected = kUnread;
  if (threads.compare_exchange_strong(expected, n, std::memory_order_relaxed) && n > 0) kernels::set_blas_threads(n);
  return threads.load(std::memory_order_relaxed);
}

}  // namespace kerascpp
