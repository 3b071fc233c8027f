// Fast pad, slice and repeat. Trailing dims that the op leaves whole are merged into one block of
// bytes, so the innermost step is a memcpy (e.g. ZeroPadding2D on (n, h, w, c) copies rows of w * c).
#include "kernels/pad_slice.h"

#include <algorithm>
#include <cstring>

namespace kerascpp::kernels {
namespace {

// count copies of the elem-byte pattern at fill; one memset when the pattern is all zero bytes.
char* fill_elems(char* y, int64_t count, const char* fill, size_t elem) {
  const size_t n = static_cast<size_t>(count) * elem;
  if (n == 0) return y;
  bool zero = true;
  for (size_t i = 0; zero && i < elem; ++i) zero = fill[i] == 0;
  if (zero) {
    std::memset(y, 0, n);
  } else {
    std::memcpy(y, fill, elem);  // then double the filled prefix until done
    for (size_t done = elem; done < n; done *= 2) std::memcpy(y + done, y, std::min(done, n - done));
  }
  return y + n;
}

// Number of leading dims to walk: the trailing dims where keep(d) holds become one block.
template <typename Keep>
int walked_dims(int rank, Keep keep) {
  int r = rank;
  while (r > 0 && keep(r - 1)) --r;
  return r;
}

struct PadArgs {
  const int64_t *in_shape, *before, *after;
  int walk;       // dims walked; the rest form a block of `inner` elements
  int64_t inner;  // elements per block
  size_t elem;
  const char* fill;
};

// Writes the padded dims [d, walk) of x into y; returns the end of y.
char* pad_rec(const PadArgs& a, const char* x, char* y, int d) {
  int64_t in_block = a.inner, out_block = a.inner;  // elements of one index of dim d
  for (int e = d + 1; e < a.walk; ++e) {
    in_block *= a.in_shape[e];
    out_block *= a.before[e] + a.in_shape[e] + a.after[e];
  }
  y = fill_elems(y, a.before[d] * out_block, a.fill, a.elem);
  if (d + 1 == a.walk) {
    const size_t n = static_cast<size_t>(a.in_shape[d] * in_block) * a.elem;
    if (n) std::memcpy(y, x, n);
    y += n;
  } else {
    for (int64_t i = 0; i < a.in_shape[d]; ++i)
      y = pad_rec(a, x + static_cast<size_t>(i * in_block) * a.elem, y, d + 1);
  }
  return fill_elems(y, a.after[d] * out_block, a.fill, a.elem);
}

struct SliceArgs {
  const int64_t *in_shape, *begin, *size;
  int walk;
  size_t block;  // bytes of one merged trailing block
};

char* slice_rec(const SliceArgs& a, const char* x, char* y, int d) {
  size_t in_block = a.block;  // bytes of one index of dim d in x
  for (int e = d + 1; e < a.walk; ++e) in_block *= static_cast<size_t>(a.in_shape[e]);
  x += static_cast<size_t>(a.begin[d]) * in_block;
  if (d + 1 == a.walk) {
    const size_t n = static_cast<size_t>(a.size[d]) * in_block;
    if (n) std::memcpy(y, x, n);
    return y + n;
  }
  for (int64_t i = 0; i < a.size[d]; ++i) y = slice_rec(a, x + static_cast<size_t>(i) * in_block, y, d + 1);
  return y;
}

struct RepeatArgs {
  const int64_t *in_shape, *repeats;
  int walk;
  size_t block;
};

// Writes every index of dim d once, then repeats it with memcpy (the copy just written is the source).
char* repeat_rec(const RepeatArgs& a, const char* x, char* y, int d) {
  size_t in_block = a.block;
  for (int e = d + 1; e < a.walk; ++e) in_block *= static_cast<size_t>(a.in_shape[e]);
  for (int64_t i = 0; i < a.in_shape[d]; ++i) {
    char* start = y;
    if (d + 1 == a.walk) {
      std::memcpy(y, x + static_cast<size_t>(i) * in_block, in_block);
      y += in_block;
    } else {
      y = repeat_rec(a, x + static_cast<size_t>(i) * in_block, y, d + 1);
    }
    const size_t n = static_cast<size_t>(y - start);
    for (int64_t r = 1; r < a.repeats[d]; ++r, y += n) std::memcpy(y, start, n);
  }
  return y;
}

int64_t product(const int64_t* s, int from, int to) {
  int64_t p = 1;
  for (int d = from; d < to; ++d) p *= s[d];
  return p;
}

}  // namespace

void pad(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* before,
         const int64_t* after, int rank, const void* fill) {
  const int walk = walked_dims(rank, [&](int d) { return before[d] == 0 && after[d] == 0; });
  const char* f = static_cast<const char*>(fill);
  if (walk == 0) {  // nothing padded (an empty x may be null, which memcpy may not be given)
    if (const size_t bytes = static_cast<size_t>(product(in_shape, 0, rank)) * elem_size; bytes > 0)
      std::memcpy(y, x, bytes);
    return;
  }
  if (product(in_shape, 0, rank) == 0) {  // all output cells are fill
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= before[d] + in_shape[d] + after[d];
    fill_elems(static_cast<char*>(y), n, f, elem_size);
    return;
  }
  const PadArgs a{in_shape, before, after, walk, product(in_shape, walk, rank), elem_size, f};
  pad_rec(a, static_cast<const char*>(x), static_cast<char*>(y), 0);
}

void slice(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* begin,
           const int64_t* size, int rank) {
  if (product(size, 0, rank) == 0) return;
  const int walk = walked_dims(rank, [&](int d) { return begin[d] == 0 && size[d] == in_shape[d]; });
  const size_t block = static_cast<size_t>(product(in_shape, walk, rank)) * elem_size;
  if (walk == 0) {
    std::memcpy(y, x, block);
    return;
  }
  slice_rec(SliceArgs{in_shape, begin, size, walk, block}, static_cast<const char*>(x), static_cast<char*>(y),
            0);
}

void repeat(const void* x, void* y, size_t elem_size, const int64_t* in_shape, const int64_t* repeats,
            int rank) {
  for (int d = 0; d < rank; ++d)
    if (in_shape[d] * repeats[d] == 0) return;
  const int walk = walked_dims(rank, [&](int d) { return repeats[d] == 1; });
  const size_t block = static_cast<size_t>(product(in_shape, walk, rank)) * elem_size;
  if (walk == 0) {
    std::memcpy(y, x, block);
    return;
  }
  repeat_rec(RepeatArgs{in_shape, repeats, walk, block}, static_cast<const char*>(x), static_cast<char*>(y),
             0);
}

}  // namespace kerascpp::kernels
