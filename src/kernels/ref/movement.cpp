// Reference data movement: every output element is found from its own index, one element at a time.
// Elements are opaque blocks of elem_size bytes, so these serve every dtype.
#include <cstring>

#include "kernels/ref/ref.h"

namespace kerascpp::kernels::ref {
namespace {

void copy_element(const void* src, int64_t src_index, void* dst, int64_t dst_index, size_t elem_size) {
  std::memcpy(static_cast<char*>(dst) + dst_index * elem_size,
              static_cast<const char*>(src) + src_index * elem_size, elem_size);
}

}  // namespace

void transpose(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int* perm, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= in_shape[d];
  for (int64_t i = 0; i < n; ++i) {
    // Output dim d has index idx and size in_shape[perm[d]]; it is input dim perm[d].
    int64_t rest = i, src = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t size = in_shape[perm[d]];
      int64_t idx = rest % size;
      rest /= size;
      int64_t stride = 1;
      for (int j = perm[d] + 1; j < rank; ++j) stride *= in_shape[j];
      src += idx * stride;
    }
    copy_element(x, src, y, i, elem_size);
  }
}

void concatenate(const void* const* xs, const int64_t* axis_dims, int count, void* y, size_t elem_size,
                 int64_t outer, int64_t inner) {
  int64_t total = 0;
  for (int t = 0; t < count; ++t) total += axis_dims[t];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t a = 0; a < total; ++a) {
      // Find the input that holds position a of the concatenated axis.
      int t = 0;
      int64_t local = a;
      while (local >= axis_dims[t]) local -= axis_dims[t++];
      for (int64_t i = 0; i < inner; ++i)
        copy_element(xs[t], (o * axis_dims[t] + local) * inner + i, y, (o * total + a) * inner + i,
                     elem_size);
    }
  }
}

void tile(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* reps, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= in_shape[d] * reps[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, src = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t out_size = in_shape[d] * reps[d];
      int64_t idx = rest % out_size;
      rest /= out_size;
      src += (idx % in_shape[d]) * stride;
      stride *= in_shape[d];
    }
    copy_element(x, src, y, i, elem_size);
  }
}

}  // namespace kerascpp::kernels::ref
