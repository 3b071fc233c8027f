// Fast data movement: contiguous runs become memcpy, the rest is a typed strided loop.
#include "kernels/movement.h"

#include <cstring>

namespace kerascpp::kernels {
namespace {

// y (contiguous) = x walked with `stride` (elements) along the r dims of `size`; returns the end of y.
template <typename T>
T* gather(const T* x, T* y, const int64_t* size, const int64_t* stride, int r) {
  if (r == 1) {
    if (stride[0] == 1) {
      std::memcpy(y, x, sizeof(T) * size[0]);
    } else {
      for (int64_t i = 0; i < size[0]; ++i) y[i] = x[i * stride[0]];
    }
    return y + size[0];
  }
  for (int64_t i = 0; i < size[0]; ++i) y = gather(x + i * stride[0], y, size + 1, stride + 1, r - 1);
  return y;
}

// Elements of other sizes: one memcpy each.
char* gather_bytes(const char* x, char* y, size_t n, const int64_t* size, const int64_t* stride, int r) {
  for (int64_t i = 0; i < size[0]; ++i) {
    if (r == 1) {
      std::memcpy(y, x + i * stride[0] * n, n);
      y += n;
    } else {
      y = gather_bytes(x + i * stride[0] * n, y, n, size + 1, stride + 1, r - 1);
    }
  }
  return y;
}

// y: (in_shape[d] * reps[d]...) from x: in_shape; returns the end of y. Writes the first copy of each
// dimension element by element, then repeats it with memcpy.
char* tile_dims(const char* x, char* y, size_t elem, const int64_t* in_shape, const int64_t* reps, int rank) {
  char* start = y;
  if (rank == 1) {
    std::memcpy(y, x, in_shape[0] * elem);
    y += in_shape[0] * elem;
  } else {
    int64_t in_block = static_cast<int64_t>(elem);
    for (int d = 1; d < rank; ++d) in_block *= in_shape[d];
    for (int64_t i = 0; i < in_shape[0]; ++i)
      y = tile_dims(x + i * in_block, y, elem, in_shape + 1, reps + 1, rank - 1);
  }
  const size_t copy = static_cast<size_t>(y - start);
  for (int64_t r = 1; r < reps[0]; ++r, y += copy) std::memcpy(y, start, copy);
  return y;
}

}  // namespace

void transpose(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int* perm, int rank) {
  int64_t in_stride[kMaxRank];
  int64_t total = 1;
  for (int d = rank - 1; d >= 0; --d) {
    in_stride[d] = total;
    total *= in_shape[d];
  }
  if (total == 0) return;
  // Output dims in order, with the input stride of each; size-1 dims dropped, and neighbours merged
  // when they are contiguous in the input too, e.g. (0, 2, 3, 1) on (b, c, h, w) walks (b, h*w, c).
  int64_t size[kMaxRank], stride[kMaxRank];
  int r = 0;
  for (int d = 0; d < rank; ++d) {
    int64_t s = in_shape[perm[d]], st = in_stride[perm[d]];
    if (s == 1) continue;
    if (r > 0 && stride[r - 1] == st * s) {
      size[r - 1] *= s;
      stride[r - 1] = st;
    } else {
      size[r] = s;
      stride[r++] = st;
    }
  }
  if (r == 0) {  // a single element
    std::memcpy(y, x, elem_size);
    return;
  }
  switch (elem_size) {
    case 1:
      gather(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), size, stride, r);
      return;
    case 2:
      gather(static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y), size, stride, r);
      return;
    case 4:
      gather(static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y), size, stride, r);
      return;
    case 8:
      gather(static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y), size, stride, r);
      return;
    default:
      gather_bytes(static_cast<const char*>(x), static_cast<char*>(y), elem_size, size, stride, r);
  }
}

void concatenate(const void* const* xs, const int64_t* axis_dims, int count, void* y, size_t elem_size,
                 int64_t outer, int64_t inner) {
  char* out = static_cast<char*>(y);
  for (int64_t o = 0; o < outer; ++o) {
    for (int t = 0; t < count; ++t) {
      const size_t bytes = static_cast<size_t>(axis_dims[t] * inner) * elem_size;
      if (bytes == 0) continue;
      std::memcpy(out, static_cast<const char*>(xs[t]) + o * bytes, bytes);
      out += bytes;
    }
  }
}

void tile(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* reps, int rank) {
  for (int d = 0; d < rank; ++d)
    if (in_shape[d] == 0 || reps[d] == 0) return;  // empty output
  if (rank == 0) {
    std::memcpy(y, x, elem_size);
    return;
  }
  tile_dims(static_cast<const char*>(x), static_cast<char*>(y), elem_size, in_shape, reps, rank);
}

}  // namespace kerascpp::kernels
