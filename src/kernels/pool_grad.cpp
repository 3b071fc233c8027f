// The pooling gradient for channels_last inputs (Keras's default), with ref::pool_grad's arithmetic:
// windows in the same order, each channel's first maximal cell (NaN never replaces a value) taking the
// window's gradient, or every cell of the window grad / cells for average pooling; the same additions
// in the same order, so the same bits (tested). Channels are the inner loop over contiguous floats, where
// the reference walks each cell through a callback and recomputes offsets per channel (it was 15 % of a
// small CNN's training epoch). Images are split between the engine's threads (kernels/parallel.h),
// each writing its own dx. channels_first stays the reference's.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/conv.h"
#include "kernels/parallel.h"
#include "kernels/ref/ref.h"

namespace kerascpp::kernels {

namespace {

// One more cell of a max-pooling window, per channel: its value replaces the best so far (and its
// number the best's) where it is greater. Four channels at a time with vector selects: random data
// mispredicts a branch half the time, and GCC keeps this loop's selects as branches.
void argmax_step(const float* xc, int32_t cell, int64_t c, float* best_v, int32_t* best) {
  using v4f = float __attribute__((vector_size(16)));
  using v4i = int32_t __attribute__((vector_size(16)));
  const v4i number = {cell, cell, cell, cell};
  int64_t ch = 0;
  for (; ch + 4 <= c; ch += 4) {
    v4f v, b;
    v4i i;
    std::memcpy(&v, xc + ch, sizeof v);
    std::memcpy(&b, best_v + ch, sizeof b);
    std::memcpy(&i, best + ch, sizeof i);
    const v4i above = v > b;
    b = above ? v : b;
    i = above ? number : i;
    std::memcpy(best_v + ch, &b, sizeof b);
    std::memcpy(best + ch, &i, sizeof i);
  }
  for (; ch < c; ++ch)
    if (xc[ch] > best_v[ch]) best_v[ch] = xc[ch], best[ch] = cell;
}

// A max-pooling window's cell `cell`, written whole: per channel, the window's gradient where this cell
// is the maximum (0.f + v, the reference's sum into a zero), else 0. Vector selects, as argmax_step.
void write_cell(float* d, int32_t cell, const float* dy, const int32_t* best, int64_t c) {
  using v4f = float __attribute__((vector_size(16)));
  using v4i = int32_t __attribute__((vector_size(16)));
  const v4i number = {cell, cell, cell, cell};
  const v4f zero = {0.f, 0.f, 0.f, 0.f};
  int64_t ch = 0;
  for (; ch + 4 <= c; ch += 4) {
    v4f g;
    v4i b;
    std::memcpy(&g, dy + ch, sizeof g);
    std::memcpy(&b, best + ch, sizeof b);
    const v4f out = b == number ? zero + g : zero;
    std::memcpy(d + ch, &out, sizeof out);
  }
  for (; ch < c; ++ch) d[ch] = best[ch] == cell ? 0.f + dy[ch] : 0.f;
}

// Whether no input cell lies in two windows (strides at least the pool, as Keras's default pooling):
// then each window writes its cells whole, and only the cells of no window are zeroed, instead of
// zeroing dx and adding into it (a second pass over dx: 3 % of a small CNN's epoch was that memset).
bool disjoint_windows(const PoolGeometry& g) {
  for (int d = 0; d < 3; ++d)
    if (g.stride[d] < g.k[d]) return false;
  return true;
}

// The cells of images [n0, n1) that no window reads (disjoint windows): set to 0.
void zero_uncovered(const PoolGeometry& g, float* dx, int64_t n0, int64_t n1) {
  std::vector<char> covered[3];
  for (int d = 0; d < 3; ++d) {
    covered[d].resize(static_cast<size_t>(g.in[d]));
    for (int64_t i = 0; i < g.in[d]; ++i) {
      const int64_t o = (i + g.pad_l[d]) / g.stride[d];
      covered[d][i] = o < g.out[d] && i + g.pad_l[d] - o * g.stride[d] < g.k[d];
    }
  }
  const int64_t c = g.c;
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t id = 0; id < g.in[0]; ++id)
      for (int64_t ih = 0; ih < g.in[1]; ++ih)
        for (int64_t iw = 0; iw < g.in[2]; ++iw)
          if (!(covered[0][id] && covered[1][ih] && covered[2][iw]))
            std::fill_n(dx + (((n * g.in[0] + id) * g.in[1] + ih) * g.in[2] + iw) * c, c, 0.f);
}

// Images [n0, n1): each writes its own dx only. Adding into a zero, as the reference does, is kept
// where windows write their cells whole (0.f + v: -0 becomes +0 there too).
void grad_images(const PoolGeometry& g, const float* x, const float* dy, float* dx, int64_t n0, int64_t n1) {
  const int64_t c = g.c, in_image = g.in[0] * g.in[1] * g.in[2] * c;
  const bool whole = disjoint_windows(g);
  if (whole)
    zero_uncovered(g, dx, n0, n1);
  else
    std::fill(dx + n0 * in_image, dx + n1 * in_image, 0.f);
  dy += n0 * g.out[0] * g.out[1] * g.out[2] * c;
  std::vector<int64_t> cells;
  std::vector<int32_t> best(static_cast<size_t>(c));  // per channel: its maximum's cell in `cells`
  std::vector<float> best_v(static_cast<size_t>(c));
  cells.reserve(static_cast<size_t>(g.k[0] * g.k[1] * g.k[2]));
  auto in_at = [&](int64_t o, int64_t t, int d) {  // input index of output o, tap t; -1 in padding
    const int64_t i = o * g.stride[d] - g.pad_l[d] + t;
    return i >= 0 && i < g.in[d] ? i : -1;
  };
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t od = 0; od < g.out[0]; ++od)
      for (int64_t oh = 0; oh < g.out[1]; ++oh)
        for (int64_t ow = 0; ow < g.out[2]; ++ow, dy += c) {
          cells.clear();  // the window's cells inside the input, as offsets of their channel 0
          for (int64_t kd = 0; kd < g.k[0]; ++kd) {
            const int64_t id = in_at(od, kd, 0);
            if (id < 0) continue;
            for (int64_t kh = 0; kh < g.k[1]; ++kh) {
              const int64_t ih = in_at(oh, kh, 1);
              if (ih < 0) continue;
              for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                const int64_t iw = in_at(ow, kw, 2);
                if (iw >= 0) cells.push_back((((n * g.in[0] + id) * g.in[1] + ih) * g.in[2] + iw) * c);
              }
            }
          }
          if (cells.empty()) continue;
          if (g.kind == PoolKind::max) {
            const float* x0 = x + cells[0];
            for (int64_t ch = 0; ch < c; ++ch) best_v[ch] = x0[ch], best[ch] = 0;
            for (size_t i = 1; i < cells.size(); ++i) argmax_step(x + cells[i], static_cast<int32_t>(i), c, best_v.data(), best.data());
            if (whole) {
              for (size_t i = 0; i < cells.size(); ++i)
                write_cell(dx + cells[i], static_cast<int32_t>(i), dy, best.data(), c);
            } else {
              for (int64_t ch = 0; ch < c; ++ch) dx[cells[best[ch]] + ch] += dy[ch];
            }
          } else {
            const float inv = 1.f / static_cast<float>(cells.size());
            if (whole) {
              for (int64_t base : cells)
                for (int64_t ch = 0; ch < c; ++ch) dx[base + ch] = 0.f + dy[ch] * inv;
            } else {
              for (int64_t ch = 0; ch < c; ++ch)
                for (int64_t base : cells) dx[base + ch] += dy[ch] * inv;
            }
          }
        }
}

}  // namespace

void pool_grad(const PoolGeometry& g, const float* x, const float* dy, float* dx) {
  if (g.channels_first) return ref::pool_grad(g, x, dy, dx);
  const int64_t in_image = std::max<int64_t>(1, g.in[0] * g.in[1] * g.in[2] * g.c);
  parallel_chunks(g.n, (kElementwiseGrain + in_image - 1) / in_image,
                  [&](int64_t n0, int64_t n1) { grad_images(g, x, dy, dx, n0, n1); }, 1);
}

}  // namespace kerascpp::kernels
