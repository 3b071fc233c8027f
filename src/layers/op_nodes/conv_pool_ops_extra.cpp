// keras.ops adaptive_max_pool / adaptive_average_pool (PyTorch's windows, as Keras's TensorFlow
// backend computes them: output i of a dim of n inputs pools [floor(i n / o), ceil((i + 1) n / o))),
// and unfold / fold (torch's im2col / col2im over (N, C, H, W)), each computed here with its backward.
// Part of conv_pool_ops (conv_pool_ops.cpp appends these).
#include <algorithm>
#include <limits>

#include "layers/op_nodes/op_node.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
namespace {

inline const Shape& shape_of(const Shape& s) { return s; }
inline const Shape& shape_of(const Tensor& t) { return t.shape(); }

// An int or a list of n ints, each >= `least`.
template <class T>
std::vector<int64_t> ints(const Args<T>& a, const char* name, size_t n, int64_t fallback, int64_t least) {
  const Json& j = a.json(name);
  std::vector<int64_t> v;
  if (j.is_null()) {
    v.assign(n, fallback);
  } else if (j.is_number_integer()) {
    v.assign(n, j.get<int64_t>());
  } else if (j.is_array() && j.size() == n && std::all_of(j.begin(), j.end(), [](const Json& e) { return e.is_number_integer(); })) {
    for (const Json& e : j) v.push_back(e.get<int64_t>());
  } else {
    a.fail(name, "an int or a list of " + std::to_string(n) + " ints");
  }
  for (int64_t e : v)
    if (e < least) a.fail(name, least == 0 ? "non-negative" : "positive");
  return v;
}


// ---- adaptive pooling
template <class T>
Shape adaptive_shape_of(const Args<T>& a) {
  const Shape x = shape_of(a.value("inputs"));
  KCPP_CHECK(x.size() >= 3 && x.size() <= 5, ValueError, a.who(), ": the input must have rank 3, 4 or 5 (batch, 1 to 3 "
             "spatial dims, channels). Received: shape=", shape_str(x));
  const size_t n = x.size() - 2;
  if (!a.has("output_size")) a.fail("output_size", "given");
  const std::vector<int64_t> o = ints(a, "output_size", n, 1, 1);
  const bool cf = channels_first(a);
  Shape s = {x[0]};
  if (cf) s.push_back(x[1]);
  s.insert(s.end(), o.begin(), o.end());
  if (!cf) s.push_back(x.back());
  return s;
}
Shape adaptive_shape(const Args<Shape>& a) { return adaptive_shape_of(a); }

// Pools x (batch, *spatial, channels) into `out`'s spatial dims. max: the first largest of each
// window gets the gradient; average: every cell of the window 1 / its size.
template <bool is_max>
Tensor adaptive_pool(const Tensor& x, const Shape& out) {
  const int rank = x.rank();
  const int64_t nb = x.dim(0), c = x.dim(-1);
  int64_t in[3] = {1, 1, 1}, o[3] = {1, 1, 1};
  for (int d = 1; d < rank - 1; ++d) in[3 - (rank - 2) + d - 1] = x.dim(d), o[3 - (rank - 2) + d - 1] = out[d];
  // Per dim, each output's window [start, end).
  std::vector<int64_t> lo[3], hi[3];
  for (int d = 0; d < 3; ++d)
    for (int64_t i = 0; i < o[d]; ++i) {
      lo[d].push_back(i * in[d] / o[d]);
      hi[d].push_back(std::min(((i + 1) * in[d] + o[d] - 1) / o[d], in[d]));
    }
  Tensor y = Tensor::empty(out);
  const int64_t cells = o[0] * o[1] * o[2];
  std::vector<int64_t> at(is_max ? y.size() : 0);  // the input index of each max
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t i0 = 0; i0 < o[0]; ++i0)
      for (int64_t i1 = 0; i1 < o[1]; ++i1)
        for (int64_t i2 = 0; i2 < o[2]; ++i2) {
          const int64_t yo = ((b * o[0] + i0) * o[1] + i1) * o[2] + i2;
          const int64_t count = (hi[0][i0] - lo[0][i0]) * (hi[1][i1] - lo[1][i1]) * (hi[2][i2] - lo[2][i2]);
          for (int64_t ch = 0; ch < c; ++ch) {
            float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.f;
            int64_t best = -1;
            for (int64_t p0 = lo[0][i0]; p0 < hi[0][i0]; ++p0)
              for (int64_t p1 = lo[1][i1]; p1 < hi[1][i1]; ++p1)
                for (int64_t p2 = lo[2][i2]; p2 < hi[2][i2]; ++p2) {
                  const int64_t xi = (((b * in[0] + p0) * in[1] + p1) * in[2] + p2) * c + ch;
                  if (!is_max) acc += xp[xi];
                  else if (best < 0 || xp[xi] > acc) acc = xp[xi], best = xi;
                }
            yp[yo * c + ch] = is_max ? acc : acc / static_cast<float>(count);
            if (is_max) at[yo * c + ch] = best;
          }
        }
  (void)cells;
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record(is_max ? "adaptive_max_pool" : "adaptive_average_pool", {x}, y,
              [=, xs = x.shape(), at = std::move(at)](const Tensor& dy) {
                Tensor dx = Tensor::zeros(xs);
                float* g = dx.data<float>();
                const float* gy = dy.data<float>();
                if (is_max) {
                  for (size_t i = 0; i < at.size(); ++i) g[at[i]] += gy[i];
                  return ops::Grads{dx};
                }
                for (int64_t b = 0; b < nb; ++b)
                  for (int64_t i0 = 0; i0 < o[0]; ++i0)
                    for (int64_t i1 = 0; i1 < o[1]; ++i1)
                      for (int64_t i2 = 0; i2 < o[2]; ++i2) {
                        const int64_t yo = ((b * o[0] + i0) * o[1] + i1) * o[2] + i2;
                        const float inv = 1.f / static_cast<float>((hi[0][i0] - lo[0][i0]) * (hi[1][i1] - lo[1][i1]) *
                                                                   (hi[2][i2] - lo[2][i2]));
                        for (int64_t p0 = lo[0][i0]; p0 < hi[0][i0]; ++p0)
                          for (int64_t p1 = lo[1][i1]; p1 < hi[1][i1]; ++p1)
                            for (int64_t p2 = lo[2][i2]; p2 < hi[2][i2]; ++p2)
                              for (int64_t ch = 0; ch < c; ++ch)
                                g[(((b * in[0] + p0) * in[1] + p1) * in[2] + p2) * c + ch] += gy[yo * c + ch] * inv;
                      }
                return ops::Grads{dx};
              });
  return y;
}

template <bool is_max>
Tensor adaptive(const Args<Tensor>& a) {
  Tensor x = a.value("inputs");
  Shape out = adaptive_shape_of(a);
  if (!channels_first(a)) return adaptive_pool<is_max>(x, out);
  // channels_first: pooled as channels_last between two transposes.
  const int rank = x.rank();
  std::vector<int> to_last = {0}, to_first = {0, rank - 1};
  for (int d = 2; d < rank; ++d) to_last.push_back(d);
  to_last.push_back(1);
  for (int d = 1; d < rank - 1; ++d) to_first.push_back(d);
  Shape out_last = {out[0]};
  for (int d = 2; d < rank; ++d) out_last.push_back(out[d]);
  out_last.push_back(out[1]);
  return ops::transpose(adaptive_pool<is_max>(ops::transpose(x, to_last), out_last), to_first);
}

// ---- unfold / fold: one index map between the (C * kh * kw, L) columns and the (C, H, W) image
// (-1 where a column reads the zero padding). Unfold gathers through it, fold adds through it; each
// is the other's backward.
struct Im2Col {
  int64_t channels = 0, image = 0;  // per sample: C, C * H * W
  Shape cols, img;                  // per sample: (C * kh * kw, L) and (C, H, W)
  std::vector<int64_t> at;          // per column entry, its image index or -1
};

template <class T>
Im2Col im2col(const Args<T>& a, int64_t c, int64_t h, int64_t w) {
  const std::vector<int64_t> k = ints(a, "kernel_size", 2, 1, 1), d = ints(a, "dilation", 2, 1, 1);
  const std::vector<int64_t> p = ints(a, "padding", 2, 0, 0), s = ints(a, "stride", 2, 1, 1);
  if (!a.has("kernel_size")) a.fail("kernel_size", "given");
  const int64_t nh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) / s[0] + 1, nw = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) / s[1] + 1;
  KCPP_CHECK(nh > 0 && nw > 0 && h + 2 * p[0] >= d[0] * (k[0] - 1) + 1 && w + 2 * p[1] >= d[1] * (k[1] - 1) + 1, ValueError,
             a.who(), ": the image (", h, ", ", w, ") with padding is smaller than the dilated kernel");
  Im2Col m;
  m.channels = c, m.image = c * h * w;
  m.cols = {c * k[0] * k[1], nh * nw};
  m.img = {c, h, w};
  if (c < 0) return m;  // shape inference of an unknown dim: no map
  m.at.reserve(c * k[0] * k[1] * nh * nw);
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t i = 0; i < k[0]; ++i)
      for (int64_t j = 0; j < k[1]; ++j)
        for (int64_t oh = 0; oh < nh; ++oh)
          for (int64_t ow = 0; ow < nw; ++ow) {
            const int64_t y = oh * s[0] + i * d[0] - p[0], x = ow * s[1] + j * d[1] - p[1];
            m.at.push_back(y >= 0 && y < h && x >= 0 && x < w ? (ch * h + y) * w + x : -1);
          }
  return m;
}

Shape with_batch(int64_t n, const Shape& s) {
  Shape out = {n};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

Tensor fold_by(const Tensor& cols, const std::shared_ptr<const Im2Col>& m);
// cols[n, e] = image[n, at[e]] (0 for -1).
Tensor unfold_by(const Tensor& image, const std::shared_ptr<const Im2Col>& m) {
  const int64_t n = image.dim(0), per = static_cast<int64_t>(m->at.size());
  Tensor y = Tensor::empty(with_batch(n, m->cols));
  const float* xp = image.data<float>();
  float* yp = y.data<float>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t e = 0; e < per; ++e) yp[b * per + e] = m->at[e] < 0 ? 0.f : xp[b * m->image + m->at[e]];
  if (ops::Recorder* r = ops::tape_for({&image}))
    r->record("unfold", {image}, y, [m](const Tensor& dy) { return ops::Grads{fold_by(dy, m)}; });
  return y;
}
// image[n, i] = sum of cols[n, e] over at[e] == i.
Tensor fold_by(const Tensor& cols, const std::shared_ptr<const Im2Col>& m) {
  const int64_t n = cols.dim(0), per = static_cast<int64_t>(m->at.size());
  Tensor y = Tensor::zeros(with_batch(n, m->img));
  const float* xp = cols.data<float>();
  float* yp = y.data<float>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t e = 0; e < per; ++e)
      if (m->at[e] >= 0) yp[b * m->image + m->at[e]] += xp[b * per + e];
  if (ops::Recorder* r = ops::tape_for({&cols}))
    r->record("fold", {cols}, y, [m](const Tensor& dy) { return ops::Grads{unfold_by(dy, m)}; });
  return y;
}

template <class T>
Im2Col unfold_map(const Args<T>& a) {
  const Shape x = shape_of(a.value("x"));
  KCPP_CHECK(x.size() == 4, ValueError, a.who(), ": the input must have rank 4 (N, C, H, W). Received: shape=", shape_str(x));
  return im2col(a, x[1], x[2], x[3]);
}
Shape unfold_shape(const Args<Shape>& a) { return with_batch(a.value("x")[0], unfold_map(a).cols); }
Tensor unfold(const Args<Tensor>& a) {
  return unfold_by(a.value("x"), std::make_shared<const Im2Col>(unfold_map(a)));
}

template <class T>
Im2Col fold_map(const Args<T>& a) {
  const Shape x = shape_of(a.value("x"));
  KCPP_CHECK(x.size() == 3, ValueError, a.who(), ": the input must have rank 3 (N, C * kernel cells, blocks). Received: shape=",
             shape_str(x));
  if (!a.has("output_size")) a.fail("output_size", "given");
  const std::vector<int64_t> k = ints(a, "kernel_size", 2, 1, 1), o = ints(a, "output_size", 2, 1, 1);
  KCPP_CHECK(x[1] % (k[0] * k[1]) == 0, ValueError, a.who(), ": the input's dim 1 (", x[1],
             ") must be divisible by the kernel's cells ", k[0] * k[1]);
  Im2Col m = im2col(a, x[1] / (k[0] * k[1]), o[0], o[1]);
  KCPP_CHECK(x[2] == m.cols[1], ValueError, a.who(), ": the input has ", x[2], " blocks where output_size=(", o[0], ", ",
             o[1], ") and the kernel, stride, padding and dilation give ", m.cols[1]);
  return m;
}
Shape fold_shape(const Args<Shape>& a) { return with_batch(a.value("x")[0], fold_map(a).img); }
Tensor fold(const Args<Tensor>& a) { return fold_by(a.value("x"), std::make_shared<const Im2Col>(fold_map(a))); }

}  // namespace

std::vector<OpDef> conv_pool_extra_ops() {
  return {
      OpDef{"ops.nn.AdaptiveMaxPool", nullptr, {"inputs", "output_size", "data_format"}, {}, adaptive_shape, adaptive<true>},
      OpDef{"ops.nn.AdaptiveAveragePool", nullptr, {"inputs", "output_size", "data_format"}, {}, adaptive_shape, adaptive<false>},
      OpDef{"ops.nn.Unfold", nullptr, {"x", "kernel_size", "dilation", "padding", "stride"}, {}, unfold_shape, unfold},
      OpDef{"ops.nn.Fold", nullptr, {"x", "output_size", "kernel_size", "dilation", "padding", "stride"}, {}, fold_shape, fold},
  };
}

}  // namespace kerascpp::layers::op_nodes
