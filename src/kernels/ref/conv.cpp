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
            for (int64_t kd = 0; kd < g.k[0]; ++kd) {
              const int64_t id = tap(od, kd, g.stride[0], 1, g.pad_l[0], g.in[0]);
              if (id < 0) continue;
              for (int64_t kh = 0; kh < g.k[1]; ++kh) {
                const int64_t ih = tap(oh, kh, g.stride[1], 1, g.pad_l[1], g.in[1]);
                if (ih < 0) continue;
                for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                  const int64_t iw = tap(ow, kw, g.stride[2], 1, g.pad_l[2], g.in[2]);
                  if (iw < 0) continue;
                  const double v = x[lx.at(n, c, id, ih, iw)];
                  best = std::max(best, v);
                  sum += v;
                  ++count;
                }
              }
            }
            const double r = g.kind == PoolKind::max ? best : (count ? sum / double(count) : 0.0);
            y[ly.at(n, c, od, oh, ow)] = static_cast<float>(r);
          }
}

}  // namespace kerascpp::kernels::ref
