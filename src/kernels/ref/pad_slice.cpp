// Reference pad, slice and repeat: every output element from its multi-index.
#include <cstring>

#include "kernels/kinds.h"
#include "kernels/ref/spatial.h"

namespace kerascpp::kernels::ref {
namespace {

// Visits every multi-index of `shape` in row-major order, calling f(idx, flat).
template <typename F>
void for_each_index(const int64_t* shape, int rank, F f) {
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= shape[d];
  int64_t idx[kMaxRank] = {};
  for (int64_t flat = 0; flat < total; ++flat) {
    f(idx, flat);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

int64_t ravel(const int64_t* idx, const int64_t* shape, int rank) {
  int64_t i = 0;
  for (int d = 0; d < rank; ++d) i = i * shape[d] + idx[d];
  return i;
}

}  // namespace

void pad(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* before,
         const int64_t* after, int rank, const void* fill) {
  int64_t out[kMaxRank];
  for (int d = 0; d < rank; ++d) out[d] = before[d] + in_shape[d] + after[d];
  for_each_index(out, rank, [&](const int64_t* idx, int64_t flat) {
    int64_t src[kMaxRank];
    bool inside = true;
    for (int d = 0; d < rank; ++d) {
      src[d] = idx[d] - before[d];
      inside = inside && src[d] >= 0 && src[d] < in_shape[d];
    }
    const void* from = inside ? static_cast<const char*>(x) + ravel(src, in_shape, rank) * elem_size : fill;
    std::memcpy(static_cast<char*>(y) + flat * elem_size, from, elem_size);
  });
}

void slice(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* begin,
           const int64_t* size, int rank) {
  for_each_index(size, rank, [&](const int64_t* idx, int64_t flat) {
    int64_t src[kMaxRank];
    for (int d = 0; d < rank; ++d) src[d] = begin[d] + idx[d];
    std::memcpy(static_cast<char*>(y) + flat * elem_size,
                static_cast<const char*>(x) + ravel(src, in_shape, rank) * elem_size, elem_size);
  });
}

void repeat(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* repeats,
            int rank) {
  int64_t out[kMaxRank];
  for (int d = 0; d < rank; ++d) out[d] = in_shape[d] * repeats[d];
  for_each_index(out, rank, [&](const int64_t* idx, int64_t flat) {
    int64_t src[kMaxRank];
    for (int d = 0; d < rank; ++d) src[d] = idx[d] / repeats[d];
    std::memcpy(static_cast<char*>(y) + flat * elem_size,
                static_cast<const char*>(x) + ravel(src, in_shape, rank) * elem_size, elem_size);
  });
}

}  // namespace kerascpp::kernels::ref
