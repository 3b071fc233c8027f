// Reference convolution, transposed convolution and pooling: direct loops in double, written from the
// definitions (TensorFlow's conv / conv_transpose / pool, which Keras calls), for tests and for the
// geometries oneDNN refuses.
#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/ref/ref.h"

namespace kerascpp::kernels::ref {
namespace {

// Element offsets of (n, c, d, h, w) in a tensor of this layout.
struct Layout {
  int64_t n, c, d, h, w;
  Layout(bool channels_first, int64_t channels, const int64_t* s) {
    if (channels_first) {
      w = 1, h = s[2], d = s[1] * s[2], c = s[0] * s[1] * s[2], n = channels * c;
    } else {
      c = 1, w = channels, h = s[2] * channels, d = s[1] * s[2] * channels, n = s[0] * d;
    }
  }
  int64_t at(int64_t in, int64_t ic, int64_t id, int64_t ih, int64_t iw) const {
    return in * n + ic * c + id * d + ih * h + iw * w;
  }
};

// Input position of output position o and kernel tap t along one dim; -1 when it falls in padding.
int64_t tap(int64_t o, int64_t t, int64_t stride, int64_t dilation, int64_t pad_l, int64_t size) {
  const int64_t i = o * stride - pad_l + t * dilation;
  return i >= 0 && i < size ? i : -1;
}

// Calls f(input offset) for every cell of pooling window (od, oh, ow) of image n, channel c that lies
// inside the input (padded cells are never part of a window).
template <typename F>
void for_each_window_cell(const PoolGeometry& g, const Layout& lx, int64_t n, int64_t c, int64_t od, int64_t oh,
                          int64_t ow, F f) {
  for (int64_t kd = 0; kd < g.k[0]; ++kd) {
    const int64_t id = tap(od, kd, g.stride[0], 1, g.pad_l[0], g.in[0]);
    if (id < 0) continue;
    for (int64_t kh = 0; kh < g.k[1]; ++kh) {
      const int64_t ih = tap(oh, kh, g.stride[1], 1, g.pad_l[1], g.in[1]);
      if (ih < 0) continue;
      for (int64_t kw = 0; kw < g.k[2]; ++kw) {
        const int64_t iw = tap(ow, kw, g.stride[2], 1, g.pad_l[2], g.in[2]);
        if (iw >= 0) f(lx.at(n, c, id, ih, iw));
      }
    }
  }
}

void conv_forward(const ConvGeometry& g, const float* x, const float* kernel, const float* bias, float* y) {
  const Layout lx(g.channels_first, g.ic, g.in), ly(g.channels_first, g.oc, g.out);
  const int64_t icg = g.ic / g.groups, ocg = g.oc / g.groups;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t od = 0; od < g.out[0]; ++od)
      for (int64_t oh = 0; oh < g.out[1]; ++oh)
        for (int64_t ow = 0; ow < g.out[2]; ++ow)
          for (int64_t oc = 0; oc < g.oc; ++oc) {
            const int64_t grp = oc / ocg;
            double acc = bias ? bias[oc] : 0.0;
            for (int64_t kd = 0; kd < g.k[0]; ++kd) {
              const int64_t id = tap(od, kd, g.stride[0], g.dilation[0], g.pad_l[0], g.in[0]);
              if (id < 0) continue;
              for (int64_t kh = 0; kh < g.k[1]; ++kh) {
                const int64_t ih = tap(oh, kh, g.stride[1], g.dilation[1], g.pad_l[1], g.in[1]);
                if (ih < 0) continue;
                for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                  const int64_t iw = tap(ow, kw, g.stride[2], g.dilation[2], g.pad_l[2], g.in[2]);
                  if (iw < 0) continue;
                  // kernel: (kd, kh, kw, icg, oc)
                  const float* kp = kernel + ((kd * g.k[1] + kh) * g.k[2] + kw) * icg * g.oc + oc;
                  for (int64_t ci = 0; ci < icg; ++ci)
                    acc += double(x[lx.at(n, grp * icg + ci, id, ih, iw)]) * kp[ci * g.oc];
                }
              }
            }
            y[ly.at(n, oc, od, oh, ow)] = static_cast<float>(acc);
          }
}

// The adjoint of the convolution y -> x: every input cell scatters into the outputs it would have been
// computed from. Accumulates in double, one output tensor at a time.
void conv_transpose(const ConvGeometry& g, const float* x, const float* kernel, const float* bias, float* y) {
  const Layout lx(g.channels_first, g.ic, g.in), ly(g.channels_first, g.oc, g.out);
  const int64_t out_size = g.n * g.oc * g.out[0] * g.out[1] * g.out[2];
  std::vector<double> acc(static_cast<size_t>(out_size), 0.0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t id = 0; id < g.in[0]; ++id)
      for (int64_t ih = 0; ih < g.in[1]; ++ih)
        for (int64_t iw = 0; iw < g.in[2]; ++iw)
          for (int64_t kd = 0; kd < g.k[0]; ++kd) {
            const int64_t od = tap(id, kd, g.stride[0], g.dilation[0], g.pad_l[0], g.out[0]);
            if (od < 0) continue;
            for (int64_t kh = 0; kh < g.k[1]; ++kh) {
              const int64_t oh = tap(ih, kh, g.stride[1], g.dilation[1], g.pad_l[1], g.out[1]);
              if (oh < 0) continue;
              for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                const int64_t ow = tap(iw, kw, g.stride[2], g.dilation[2], g.pad_l[2], g.out[2]);
                if (ow < 0) continue;
                // kernel: (kd, kh, kw, oc, ic)
                const float* kp = kernel + ((kd * g.k[1] + kh) * g.k[2] + kw) * g.oc * g.ic;
                for (int64_t oc = 0; oc < g.oc; ++oc) {
                  double s = 0.0;
                  for (int64_t ic = 0; ic < g.ic; ++ic) s += double(x[lx.at(n, ic, id, ih, iw)]) * kp[oc * g.ic + ic];
                  acc[ly.at(n, oc, od, oh, ow)] += s;
                }
              }
            }
          }
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oc = 0; oc < g.oc; ++oc)
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            const int64_t i = ly.at(n, oc, od, oh, ow);
            y[i] = static_cast<float>(acc[i] + (bias ? bias[oc] : 0.0));
          }
}

}  // namespace

void conv(const ConvGeometry& g, const float* x, const float* kernel, const float* bias, float* y) {
  if (g.transpose)
    conv_transpose(g, x, kernel, bias, y);
  else
    conv_forward(g, x, kernel, bias, y);
}

void pool(const PoolGeometry& g, const float* x, float* y) {
  const Layout lx(g.channels_first, g.c, g.in), ly(g.channels_first, g.c, g.out);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
            int64_t count = 0;
            for_each_window_cell(g, lx, n, c, od, oh, ow, [&](int64_t i) {
              best = std::max(best, double(x[i]));
              sum += x[i];
              ++count;
            });
            const double r = g.kind == PoolKind::max ? best : (count ? sum / double(count) : 0.0);
            y[ly.at(n, c, od, oh, ow)] = static_cast<float>(r);
          }
}

// The gradients of conv (kernels/conv.h): every (B cell, tap, A cell) triple the convolution relates,
// where A is the side the kernel slides over (x of a convolution, y of a transposed one) and B the
// other. Both layouts index the kernel as (taps, A channels per group, B channels).
void conv_grad(const ConvGeometry& g, const float* x, const float* kernel, const float* dy, float* dx, float* dkernel,
               float* dbias) {
  const bool t = g.transpose;
  const int64_t a_ch = t ? g.oc : g.ic, b_ch = t ? g.ic : g.oc, groups = t ? 1 : g.groups;
  const int64_t a_g = a_ch / groups, b_g = b_ch / groups;
  const int64_t* a_dims = t ? g.out : g.in;
  const int64_t* b_dims = t ? g.in : g.out;
  const Layout la(g.channels_first, a_ch, a_dims), lb(g.channels_first, b_ch, b_dims);
  const float* A = t ? dy : x;
  const float* B = t ? x : dy;
  const int64_t x_size = g.n * g.ic * g.in[0] * g.in[1] * g.in[2];
  const int64_t k_size = g.k[0] * g.k[1] * g.k[2] * a_g * b_ch;
  std::vector<double> gx(dx ? x_size : 0, 0.0), gk(dkernel ? k_size : 0, 0.0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t bd = 0; bd < b_dims[0]; ++bd)
      for (int64_t bh = 0; bh < b_dims[1]; ++bh)
        for (int64_t bw = 0; bw < b_dims[2]; ++bw)
          for (int64_t kd = 0; kd < g.k[0]; ++kd) {
            const int64_t ad = tap(bd, kd, g.stride[0], g.dilation[0], g.pad_l[0], a_dims[0]);
            if (ad < 0) continue;
            for (int64_t kh = 0; kh < g.k[1]; ++kh) {
              const int64_t ah = tap(bh, kh, g.stride[1], g.dilation[1], g.pad_l[1], a_dims[1]);
              if (ah < 0) continue;
              for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                const int64_t aw = tap(bw, kw, g.stride[2], g.dilation[2], g.pad_l[2], a_dims[2]);
                if (aw < 0) continue;
                const int64_t tap_index = (kd * g.k[1] + kh) * g.k[2] + kw;
                for (int64_t bc = 0; bc < b_ch; ++bc) {
                  const int64_t grp = bc / b_g, ib = lb.at(n, bc, bd, bh, bw);
                  for (int64_t ci = 0; ci < a_g; ++ci) {
                    const int64_t ia = la.at(n, grp * a_g + ci, ad, ah, aw);
                    const int64_t ik = (tap_index * a_g + ci) * b_ch + bc;
                    if (dkernel) gk[ik] += double(A[ia]) * B[ib];
                    if (dx) gx[t ? ib : ia] += double(t ? A[ia] : B[ib]) * kernel[ik];
                  }
                }
              }
            }
          }
  for (int64_t i = 0; dx && i < x_size; ++i) dx[i] = static_cast<float>(gx[i]);
  for (int64_t i = 0; dkernel && i < k_size; ++i) dkernel[i] = static_cast<float>(gk[i]);
  if (dbias) {
    const Layout ly(g.channels_first, g.oc, g.out);
    std::vector<double> gb(g.oc, 0.0);
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t oc = 0; oc < g.oc; ++oc)
        for (int64_t od = 0; od < g.out[0]; ++od)
          for (int64_t oh = 0; oh < g.out[1]; ++oh)
            for (int64_t ow = 0; ow < g.out[2]; ++ow) gb[oc] += dy[ly.at(n, oc, od, oh, ow)];
    for (int64_t oc = 0; oc < g.oc; ++oc) dbias[oc] = static_cast<float>(gb[oc]);
  }
}

// Max pooling sends each output's gradient to the first maximum of its window (TensorFlow's CPU
// kernel); average pooling spreads it over the window's cells inside the input. Channels are the
// inner loop (they are contiguous in channels_last), which makes this reference fast enough to train
// small CNNs with.
void pool_grad(const PoolGeometry& g, const float* x, const float* dy, float* dx) {
  const Layout lx(g.channels_first, g.c, g.in), ly(g.channels_first, g.c, g.out);
  std::fill(dx, dx + g.n * g.c * g.in[0] * g.in[1] * g.in[2], 0.f);
  std::vector<int64_t> best(g.c), cells;
  std::vector<float> best_v(g.c);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t od = 0; od < g.out[0]; ++od)
      for (int64_t oh = 0; oh < g.out[1]; ++oh)
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          cells.clear();
          for_each_window_cell(g, lx, n, 0, od, oh, ow, [&](int64_t base) {
            if (g.kind == PoolKind::max) {
              const float* xc = x + base;
              for (int64_t c = 0; c < g.c; ++c) {
                const float v = xc[c * lx.c];
                if (cells.empty() || v > best_v[c]) best_v[c] = v, best[c] = base + c * lx.c;
              }
            }
            cells.push_back(base);
          });
          if (cells.empty()) continue;
          const float inv = 1.f / static_cast<float>(cells.size());
          for (int64_t c = 0; c < g.c; ++c) {
            const float grad = dy[ly.at(n, c, od, oh, ow)];
            if (g.kind == PoolKind::max) {
              dx[best[c]] += grad;
            } else {
              for (int64_t base : cells) dx[base + c * lx.c] += grad * inv;
            }
          }
        }
}

}  // namespace kerascpp::kernels::ref
