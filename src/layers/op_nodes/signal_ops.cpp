// Signal op nodes: keras.ops fft / fft2 / ifft2 / rfft / irfft / stft / istft / extract_sequences, and
// tf_keras's tf.signal.frame. Keras 3 passes complex numbers as (real, imag) pairs of float tensors:
// these ops take such a pair as their `x` and give two outputs where Keras returns one.
//
// Each transform is a direct DFT: a product with a constant (n, m) matrix of cosines and sines along
// the last axis (a window folded in), O(n^2) per row, exact enough for the small lengths op nodes
// meet. Framing (with STFT's reflect padding) is one gather along the last axis and ISTFT's
// overlap-add one scatter; each records the other as its backward, and the products and sums are
// differentiable ops, so every op here has its gradient (the adjoint transform).
#include <cmath>
#include <numbers>

#include "layers/op_nodes/op_node.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
namespace {
using ops::BinaryOp;

// Along the last axis: gather, y[..., o] = x[..., idx[o]] (fill where idx[o] < 0), out_len =
// idx.size(); or scatter, y[..., idx[p]] += x[..., p] (dropped where idx[p] < 0), p < idx.size() =
// x's last dim. Each is the other's adjoint.
Tensor move_last(const Tensor& x, const std::vector<int64_t>& idx, int64_t out_len, bool gather, float fill) {
  const int64_t in_len = x.rank() ? x.dim(-1) : 1, rows = in_len ? x.size() / in_len : 0;
  Shape s = x.shape();
  s.back() = out_len;
  Tensor y = gather ? Tensor::empty(s) : Tensor::zeros(s);
  const float* xs = x.data<float>();
  float* ys = y.data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < idx.size(); ++i) {
      if (gather)
        ys[r * out_len + i] = idx[i] < 0 ? fill : xs[r * in_len + idx[i]];
      else if (idx[i] >= 0)
        ys[r * out_len + idx[i]] += xs[r * in_len + i];
    }
  return y;
}
Tensor gather_last(const Tensor& x, std::vector<int64_t> idx, float fill) {
  const int64_t n = x.dim(-1);
  Tensor y = move_last(x, idx, static_cast<int64_t>(idx.size()), true, fill);
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("frame", {x}, y, [idx = std::move(idx), n](const Tensor& dy) {
      return ops::Grads{move_last(dy, idx, n, false, 0.f)};
    });
  return y;
}
Tensor scatter_last(const Tensor& x, std::vector<int64_t> idx, int64_t out_len) {
  Tensor y = move_last(x, idx, out_len, false, 0.f);
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("overlap_and_add", {x}, y, [idx = std::move(idx)](const Tensor& dy) {
      return ops::Grads{move_last(dy, idx, static_cast<int64_t>(idx.size()), true, 0.f)};
    });
  return y;
}

// x (..., n) @ w (n, m) -> (..., m).
Tensor along_last(const Tensor& x, const Tensor& w) {
  Shape s = x.shape();
  s.back() = w.dim(1);
  return ops::matmul(x.reshape({-1, x.dim(-1)}), w).reshape(s);
}
// A constant (rows, cols) matrix of f(j, k), computed in double.
template <typename F>
Tensor matrix(int64_t rows, int64_t cols, F f) {
  Tensor m = Tensor::empty({rows, cols});
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t k = 0; k < cols; ++k) m.data<float>()[j * cols + k] = static_cast<float>(f(j, k));
  return m;
}
// The angle 2 pi j k / n, with j k reduced mod n first (exact for any length that op nodes meet).
double angle(int64_t j, int64_t k, int64_t n) {
  return 2 * std::numbers::pi * static_cast<double>((j * k) % n) / n;
}
Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::subtract, a, b); }

// The complex DFT along the last axis of re + i im: X_k = sum_j x_j e^{-2 pi i j k / n}.
std::vector<Tensor> dft(const Tensor& re, const Tensor& im) {
  const int64_t n = re.dim(-1);
  if (n == 0) return {re, im};
  const Tensor c = matrix(n, n, [n](int64_t j, int64_t k) { return std::cos(angle(j, k, n)); });
  const Tensor s = matrix(n, n, [n](int64_t j, int64_t k) { return std::sin(angle(j, k, n)); });
  return {add(along_last(re, c), along_last(im, s)), sub(along_last(im, c), along_last(re, s))};
}
std::vector<Tensor> swap_last_two(const std::vector<Tensor>& z) {
  std::vector<int> perm(z[0].rank());
  for (int d = 0; d < z[0].rank(); ++d) perm[d] = d;
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return {ops::transpose(z[0], perm), ops::transpose(z[1], perm)};
}
std::vector<Tensor> dft2(const std::vector<Tensor>& z) {
  const std::vector<Tensor> t = swap_last_two(dft(z[0], z[1]));
  return swap_last_two(dft(t[0], t[1]));
}

// ---- the (real, imag) pair of a complex argument.
Shape shape_of(const Shape& s) { return s; }
Shape shape_of(const Tensor& t) { return t.shape(); }
template <class T>
std::vector<T> complex_pair(const Args<T>& a, size_t min_rank) {
  const std::vector<T> z = a.values("x");
  if (z.size() != 2) a.fail("x", "not a tuple of two tensors (real, imag)");
  const Shape s0 = shape_of(z[0]), s1 = shape_of(z[1]);
  if (s0 != s1) a.fail("x", "not a pair of tensors of one shape (real, imag)");
  if (s0.size() < min_rank) a.fail("x", "not of rank " + std::to_string(min_rank) + " or more");
  if (min_rank && s0.back() < 0) a.fail("x", "not of a known last dim");
  return z;
}
template <size_t rank>
std::vector<Shape> pair_shapes(const Args<Shape>& a) {
  const std::vector<Shape> z = complex_pair(a, rank);
  if (rank == 2 && z[0][z[0].size() - 2] < 0) a.fail("x", "not of known last two dims");
  return z;
}
std::vector<Tensor> fft(const Args<Tensor>& a) {
  const std::vector<Tensor> z = complex_pair(a, 1);
  return dft(z[0], z[1]);
}
std::vector<Tensor> fft2(const Args<Tensor>& a) { return dft2(complex_pair(a, 2)); }
// Keras's: the conjugate's fft2, conjugated and divided by h w.
std::vector<Tensor> ifft2(const Args<Tensor>& a) {
  const std::vector<Tensor> z = complex_pair(a, 2);
  const float hw = static_cast<float>(z[0].dim(-2)) * static_cast<float>(z[0].dim(-1));
  const std::vector<Tensor> f = dft2({z[0], ops::scale_shift(z[1], -1.f, 0.f)});
  return {ops::scale_shift(f[0], 1.f / hw, 0.f), ops::scale_shift(f[1], -1.f / hw, 0.f)};
}

// ---- rfft / irfft: fft_length (default: the input's length; irfft's 2 (m - 1)) crops or zero-pads
// the input, as TensorFlow's.
template <class T>
int64_t fft_length(const Args<T>& a, int64_t fallback) {
  const int64_t l = a.get("fft_length", fallback);
  if (l < 1) a.fail("fft_length", "not a positive integer");
  return l;
}
std::vector<Shape> rfft_shapes(const Args<Shape>& a) {
  Shape s = a.value("x");
  expect_rank(a, s, 1, "x");
  if (!a.has("fft_length") && s.back() < 0) a.fail("x", "not of a known last dim");
  s.back() = fft_length(a, s.back()) / 2 + 1;
  return {s, s};
}
std::vector<Tensor> rfft(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (x.rank() < 1) a.fail("x", "not of rank 1 or more");
  const int64_t n = x.dim(-1), l = fft_length(a, n), m = l / 2 + 1;
  if (n == 0) a.fail("x", "not of a last dim above 0");
  const Tensor c = matrix(n, m, [l](int64_t j, int64_t k) { return j < l ? std::cos(angle(j, k, l)) : 0.0; });
  const Tensor s =
      matrix(n, m, [l](int64_t j, int64_t k) { return j < l ? -std::sin(angle(j, k, l)) : 0.0; });
  return {along_last(x, c), along_last(x, s)};
}
// The real signal of length l whose spectrum's first l / 2 + 1 bins are re + i im (Hermitian: the
// imaginary parts of bin 0 and, l even, of bin l / 2 do not count), each sample times scale[t].
Tensor inverse_real(const Tensor& re, const Tensor& im, int64_t l, const std::vector<double>& scale) {
  const int64_t m = re.dim(-1), bins = l / 2 + 1;
  auto weight = [l, bins](int64_t k) {
    return k >= bins ? 0.0 : k == 0 || (l % 2 == 0 && k == l / 2) ? 1.0 : 2.0;
  };
  const Tensor wr =
      matrix(m, l, [&](int64_t k, int64_t t) { return weight(k) * std::cos(angle(k, t, l)) / l * scale[t]; });
  const Tensor wi = matrix(
      m, l, [&](int64_t k, int64_t t) { return -weight(k) * std::sin(angle(k, t, l)) / l * scale[t]; });
  return add(along_last(re, wr), along_last(im, wi));
}
Shape irfft_shape(const Args<Shape>& a) {
  Shape s = complex_pair(a, 1)[0];
  if (!a.has("fft_length") && s.back() < 0) a.fail("x", "not of a known last dim");
  s.back() = fft_length(a, 2 * (s.back() - 1));
  return s;
}
Tensor irfft(const Args<Tensor>& a) {
  const std::vector<Tensor> z = complex_pair(a, 1);
  const int64_t l = fft_length(a, 2 * (z[0].dim(-1) - 1));
  if (z[0].dim(-1) == 0) a.fail("x", "not of a last dim above 0");
  return inverse_real(z[0], z[1], l, std::vector<double>(l, 1.0));
}

// ---- stft / istft: frames of fft_length samples every sequence_stride (center: the signal
// reflect-padded by fft_length / 2 on both sides first), the window of sequence_length samples
// centred in them (zero-padded), as Keras's TensorFlow backend calls tf.signal.stft / inverse_stft.
template <class T>
void check_stft(const Args<T>& a, int64_t seq, int64_t stride, int64_t l) {
  if (seq < 1) a.fail("sequence_length", "not a positive integer");
  if (stride < 1) a.fail("sequence_stride", "not a positive integer");
  if (l < seq) a.fail("fft_length", "not at least `sequence_length`");
  const Json& w = a.json("window");
  if (w.is_string() && w != "hann" && w != "hamming")
    a.fail("window", "not 'hann', 'hamming', None or a list of numbers");
  if (!w.is_null() && !w.is_string() && !w.is_array())
    a.fail("window", "not 'hann', 'hamming', None or a list of numbers");
}
struct Stft {
  int64_t seq, stride, l;
};
template <class T>
Stft stft_args(const Args<T>& a) {
  const Stft s{a.get("sequence_length", int64_t{0}), a.get("sequence_stride", int64_t{0}),
               a.get("fft_length", int64_t{0})};
  check_stft(a, s.seq, s.stride, s.l);
  return s;
}
// The window padded to fft_length; empty for None. tf.signal's periodic hann / hamming windows, in
// float32 as TensorFlow computes them (its period: the length, less one for an odd length).
std::vector<double> window_of(const Args<Tensor>& a, const Stft& s) {
  const Json& w = a.json("window");
  if (a.given("window") && w.is_null()) return {};
  std::vector<double> win(s.seq);
  if (!a.given("window") || w.is_string()) {
    const bool hann = !a.given("window") || w == "hann";
    const float alpha = hann ? 0.5f : 0.54f, beta = hann ? 0.5f : 0.46f;
    const float period = static_cast<float>(s.seq % 2 == 0 ? s.seq : s.seq - 1);
    for (int64_t i = 0; i < s.seq; ++i)
      win[i] = s.seq == 1 ? 1.0
                          : alpha - beta * std::cos(static_cast<float>(2 * std::numbers::pi) *
                                                    static_cast<float>(i) / period);
  } else {
    const Tensor t = a.value("window");
    if (t.rank() != 1 || t.dim(0) != s.seq)
      a.fail("window", "not of shape (sequence_length,) = (" + std::to_string(s.seq) + ",)");
    for (int64_t i = 0; i < s.seq; ++i) win[i] = t.data<float>()[i];
  }
  std::vector<double> padded(s.l, 0.0);
  const int64_t left = (s.l - s.seq) / 2;
  for (int64_t i = 0; i < s.seq; ++i) padded[left + i] = win[i];
  return padded;
}
template <class T>
int64_t stft_frames(const Args<T>& a, const Stft& s, int64_t n, int64_t* padded) {
  const bool center = a.get("center", true);
  if (center && n >= 0 && s.l / 2 >= n)
    a.fail("x", "not longer than fft_length / 2 (center reflects the signal at its ends)");
  *padded = n < 0 ? -1 : n + (center ? 2 * (s.l / 2) : 0);
  return *padded < 0 ? -1 : std::max<int64_t>(0, 1 + (*padded - s.l) / s.stride);
}
std::vector<Shape> stft_shapes(const Args<Shape>& a) {
  Shape x = a.value("x");
  expect_rank(a, x, 1, "x");
  const Stft s = stft_args(a);
  int64_t padded = 0;
  x.back() = stft_frames(a, s, x.back(), &padded);
  x.push_back(s.l / 2 + 1);
  return {x, x};
}
std::vector<Tensor> stft(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (x.rank() < 1) a.fail("x", "not of rank 1 or more");
  const Stft s = stft_args(a);
  const int64_t n = x.dim(-1), m = s.l / 2 + 1;
  int64_t padded = 0;
  const int64_t frames = stft_frames(a, s, n, &padded), pad = (padded - n) / 2;
  std::vector<int64_t> idx(frames * s.l);
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < s.l; ++j) {
      int64_t t = f * s.stride + j - pad;  // reflect (no edge repeat), as tf.pad(mode="reflect")
      if (t < 0) t = -t;
      if (t >= n) t = 2 * (n - 1) - t;
      idx[f * s.l + j] = t;
    }
  Shape fs = x.shape();
  fs.back() = frames;
  fs.push_back(s.l);
  const Tensor framed = gather_last(x, std::move(idx), 0.f).reshape(fs);
  std::vector<double> win = window_of(a, s);
  if (win.empty()) win.assign(s.l, 1.0);
  const Tensor c = matrix(s.l, m, [&](int64_t j, int64_t k) { return win[j] * std::cos(angle(j, k, s.l)); });
  const Tensor si =
      matrix(s.l, m, [&](int64_t j, int64_t k) { return -win[j] * std::sin(angle(j, k, s.l)); });
  return {along_last(framed, c), along_last(framed, si)};
}
// ISTFT's output: [start, end) of the overlap-added frames, as Keras slices them.
template <class T>
std::pair<int64_t, int64_t> istft_span(const Args<T>& a, const Stft& s, int64_t frames) {
  const int64_t total = (frames - 1) * s.stride + s.l, half = s.l / 2;
  const bool center = a.get("center", true);
  const int64_t start = std::min(center ? half : 0, total);
  int64_t end = a.has("length") ? start + a.get("length", int64_t{0})
                : center        ? (half == 0 ? 0 : total - half)
                                : total;
  if (a.has("length") && a.get("length", int64_t{0}) < 0) a.fail("length", "not a non-negative integer");
  end = std::clamp<int64_t>(end, 0, total);
  return {start, std::max(start, end)};
}
Shape istft_shape(const Args<Shape>& a) {
  Shape x = complex_pair(a, 2)[0];
  const Stft s = stft_args(a);
  const int64_t frames = x[x.size() - 2];
  x.pop_back();
  if (frames < 0) {
    x.back() = a.has("length") ? a.get("length", int64_t{0}) : -1;
  } else {
    const auto [start, end] = istft_span(a, s, frames);
    x.back() = end - start;
  }
  return x;
}
Tensor istft(const Args<Tensor>& a) {
  const std::vector<Tensor> z = complex_pair(a, 2);
  const Stft s = stft_args(a);
  const int64_t frames = z[0].dim(-2);
  if (frames < 1) a.fail("x", "not of one frame or more");
  // tf.signal.inverse_stft_window_fn: the window over the sum of its squares at every shift.
  std::vector<double> win = window_of(a, s), scale(s.l, 1.0);
  if (!win.empty())
    for (int64_t j = 0; j < s.l; ++j) {
      double denom = 0;
      for (int64_t i = j % s.stride; i < s.l; i += s.stride) denom += win[i] * win[i];
      scale[j] = win[j] / denom;
    }
  const Tensor framed = inverse_real(z[0], z[1], s.l, scale);  // (..., frames, l)
  const auto [start, end] = istft_span(a, s, frames);
  std::vector<int64_t> idx(frames * s.l);
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < s.l; ++j) {
      const int64_t t = f * s.stride + j;
      idx[f * s.l + j] = t >= start && t < end ? t - start : -1;
    }
  Shape flat = framed.shape();
  flat.pop_back();
  flat.back() = frames * s.l;
  return scatter_last(framed.reshape(flat), std::move(idx), end - start);
}

// ---- extract_sequences / tf.signal.frame: frames of frame_length samples every frame_step along
// an axis (-1: the last), which becomes the two axes (frames, frame_length); pad_end: up to
// ceil(n / step) frames, the samples past the end pad_value.
struct Frame {
  int64_t length, step;
  bool pad_end;
  float pad_value;
  int axis;
};
template <class T>
Frame frame_args(const Args<T>& a, int rank) {
  const bool keras = a.keras3();
  const char* len = keras ? "sequence_length" : "frame_length";
  const char* step = keras ? "sequence_stride" : "frame_step";
  Frame f{a.get(len, int64_t{0}), a.get(step, int64_t{0}), a.get("pad_end", false), a.get("pad_value", 0.f),
          a.get("axis", -1)};
  if (f.length < 1) a.fail(len, "not a positive integer");
  if (f.step < 1) a.fail(step, "not a positive integer");
  if (rank < 1) a.fail(keras ? "x" : "signal", "not of rank 1 or more");
  if (f.axis < -rank || f.axis >= rank)
    a.fail("axis", "not an axis of the input's " + std::to_string(rank) + " dims");
  if (f.axis < 0) f.axis += rank;
  return f;
}
int64_t frame_count(const Frame& f, int64_t n) {
  if (n < 0) return -1;
  return f.pad_end ? (n + f.step - 1) / f.step : std::max<int64_t>(0, 1 + (n - f.length) / f.step);
}
Shape frame_shape(const Args<Shape>& a) {
  Shape x = a.value("x");
  const Frame f = frame_args(a, static_cast<int>(x.size()));
  const int64_t n = x[f.axis];
  x[f.axis] = f.length;
  x.insert(x.begin() + f.axis, frame_count(f, n));
  return x;
}
Tensor frame(const Args<Tensor>& a) {
  Tensor x = a.value("x");
  const Frame f = frame_args(a, x.rank());
  const int r = x.rank();
  std::vector<int> to_last;
  for (int d = 0; d < r; ++d)
    if (d != f.axis) to_last.push_back(d);
  to_last.push_back(f.axis);
  if (f.axis != r - 1) x = ops::transpose(x, to_last);
  const int64_t n = x.dim(-1), frames = frame_count(f, n);
  std::vector<int64_t> idx(frames * f.length);
  for (int64_t i = 0; i < frames; ++i)
    for (int64_t j = 0; j < f.length; ++j) {
      const int64_t t = i * f.step + j;
      idx[i * f.length + j] = t < n ? t : -1;
    }
  Shape s = x.shape();
  s.back() = frames;
  s.push_back(f.length);
  Tensor y = gather_last(x, std::move(idx), f.pad_value).reshape(s);
  if (f.axis == r - 1) return y;
  // (before..., after..., frames, length) -> (before..., frames, length, after...)
  std::vector<int> back;
  for (int d = 0; d < f.axis; ++d) back.push_back(d);
  back.push_back(r - 1), back.push_back(r);
  for (int d = f.axis; d < r - 1; ++d) back.push_back(d);
  return ops::transpose(y, back);
}

}  // namespace

std::vector<OpDef> signal_ops() {
  // clang-format off
  return {
      OpDef{"ops.math.FFT", nullptr, {"x"}, {}, nullptr, nullptr, pair_shapes<1>, fft},
      OpDef{"ops.math.FFT2", nullptr, {"x"}, {}, nullptr, nullptr, pair_shapes<2>, fft2},
      OpDef{"ops.math.IFFT2", nullptr, {"x"}, {}, nullptr, nullptr, pair_shapes<2>, ifft2},
      OpDef{"ops.math.RFFT", nullptr, {"x", "fft_length"}, {}, nullptr, nullptr, rfft_shapes, rfft},
      OpDef{"ops.math.IRFFT", nullptr, {"x", "fft_length"}, {}, irfft_shape, irfft},
      OpDef{"ops.math.STFT", nullptr, {"x", "sequence_length", "sequence_stride", "fft_length", "window", "center"}, {}, nullptr,
            nullptr, stft_shapes, stft},
      OpDef{"ops.math.ISTFT", nullptr, {"x", "sequence_length", "sequence_stride", "fft_length", "length", "window", "center"}, {},
            istft_shape, istft},
      OpDef{"ops.math.ExtractSequences", nullptr, {"x", "sequence_length", "sequence_stride"}, {}, frame_shape, frame},
      OpDef{nullptr, "signal.frame", {"x", "frame_length", "frame_step", "pad_end", "pad_value", "axis"}, {{"signal", "x"}},
            frame_shape, frame},
  };
  // clang-format on
}

}  // namespace kerascpp::layers::op_nodes
