// Image op nodes, part 2 (part 1: image_ops.cpp): the ops that resample an image.
//  - resize (keras.ops.image.resize, tf.image.resize, tf.image.resize_with_pad): nearest, and bilinear /
//    bicubic without antialias, by ops::resize (TF's ResizeNearestNeighbor / ResizeBilinear /
//    ResizeBicubic); area (ResizeArea), lanczos3 / lanczos5 / gaussian / mitchellcubic and antialiased
//    bilinear / bicubic (TF's ScaleAndTranslate kernel) as one weight matrix per spatial axis, applied
//    by matmul, so their gradient is the matrices' transpose.
//  - scale_and_translate (keras.ops.image): the weight matrices the TF backend computes in Python.
//  - affine_transform / perspective_transform: TF's ImageProjectiveTransformV3 (nearest / bilinear,
//    fill modes), its backward scattering each output's bilinear weights back (none for the transform).
//  - map_coordinates (order 0 / 1, Keras's fill modes): backward to the input and, through the linear
//    weights, to the coordinates.
// elastic_transform draws its displacement from TensorFlow's random stream, which kerascpp does not
// reproduce: refused by name.
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>

#include "layers/op_nodes/op_node.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
namespace image_detail {
bool is_channels_first(const Json& data_format, const std::string& who);
void expect_images(const Shape& s, const std::string& who, const char* name);
Tensor to_nhwc(const Tensor& x, bool cf);
Tensor from_nhwc(const Tensor& y, int rank, bool cf);
}  // namespace image_detail

namespace {
using namespace image_detail;  // NOLINT

template <class T>
bool cf_of(const Args<T>& a) {
  return a.keras3() && is_channels_first(a.json("data_format"), a.who());
}
template <class T>
std::string text(const Args<T>& a, const char* name, const char* fallback) {
  const Json& j = a.json(name);
  if (j.is_null()) return fallback;
  if (!j.is_string()) a.fail(name, "a string");
  return j.get<std::string>();
}

// ---- weight matrices (out, in), row o the weights of output o over the inputs.
using Kernel = float (*)(float);
struct KernelDef {
  Kernel f;
  float radius;
};
constexpr float kPi = 3.14159265359f;  // TF's sampling_kernels.h
float triangle(float x) { x = std::fabs(x); return x < 1.f ? 1.f - x : 0.f; }
float keys_cubic(float x) {
  x = std::fabs(x);
  if (x >= 2.f) return 0.f;
  if (x >= 1.f) return ((-0.5f * x + 2.5f) * x - 4.f) * x + 2.f;
  return ((1.5f * x - 2.5f) * x) * x + 1.f;
}
template <int R>
float lanczos(float x) {
  const float r = R;
  x = std::fabs(x);
  if (x > r) return 0.f;
  if (x <= 1e-3f) return 1.f;
  return r * std::sin(kPi * x) * std::sin(kPi * x / r) / (kPi * kPi * x * x);
}
float gaussian(float x) {
  constexpr float radius = 1.5f, sigma = radius / 3.f;
  x = std::fabs(x);
  if (x >= radius) return 0.f;
  return std::exp(-x * x / (2.f * sigma * sigma));
}
float mitchell_cubic(float x) {
  x = std::fabs(x);
  if (x >= 2.f) return 0.f;
  if (x >= 1.f) return (((-7.f / 18.f) * x + 2.f) * x - 10.f / 3.f) * x + 16.f / 9.f;
  return (((7.f / 6.f) * x - 2.f) * x) * x + 8.f / 9.f;
}

// TF's ScaleAndTranslate kernel (scale_and_translate_op.cc ComputeSpansCore), translation 0.
std::vector<float> span_weights(int64_t in, int64_t out, float scale, KernelDef k, bool antialias) {
  std::vector<float> m(static_cast<size_t>(out * in), 0.f);
  const float inv_scale = 1.f / scale, kernel_scale = antialias ? std::max(inv_scale, 1.f) : 1.f;
  const float one_over = 1.f / kernel_scale;
  for (int64_t o = 0; o < out; ++o) {
    const float sample = (static_cast<float>(o) + 0.5f) * inv_scale;
    if (sample < 0 || sample > static_cast<float>(in)) continue;
    const int64_t start = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(sample - k.radius * kernel_scale - 0.5f)), 0, in - 1);
    const int64_t end = std::clamp<int64_t>(static_cast<int64_t>(std::floor(sample + k.radius * kernel_scale - 0.5f)), 0, in - 1) + 1;
    float total = 0.f;
    for (int64_t s = start; s < end; ++s) total += m[o * in + s] = k.f(std::fabs((static_cast<float>(s) + 0.5f - sample) * one_over));
    if (std::fabs(total) >= 1000.f * FLT_MIN) {
      const float inv = 1.f / total;
      for (int64_t s = start; s < end; ++s) m[o * in + s] *= inv;
    } else {
      for (int64_t s = start; s < end; ++s) m[o * in + s] = 0.f;
    }
  }
  return m;
}
// TF's ResizeArea (align_corners false): each output averages the input cells it covers.
std::vector<float> area_weights(int64_t in, int64_t out) {
  std::vector<float> m(static_cast<size_t>(out * in), 0.f);
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    const float lo = static_cast<float>(o) * scale, hi = static_cast<float>(o + 1) * scale;
    for (auto i = static_cast<int64_t>(std::floor(lo)); i < static_cast<int64_t>(std::ceil(hi)); ++i)
      m[o * in + std::min(i, in - 1)] += (std::min(static_cast<float>(i + 1), hi) - std::max(static_cast<float>(i), lo)) / scale;
  }
  return m;
}
// The Keras TF backend's _compute_weight_mat (scale_and_translate).
std::vector<float> keras_weights(int64_t in, int64_t out, float scale, float translation, KernelDef k, bool antialias) {
  std::vector<float> m(static_cast<size_t>(out * in), 0.f);
  const float inv_scale = 1.f / scale, kernel_scale = antialias ? std::max(inv_scale, 1.f) : 1.f;
  for (int64_t o = 0; o < out; ++o) {
    const float sample = (static_cast<float>(o) + 0.5f) * inv_scale - translation * inv_scale - 0.5f;
    if (!(sample >= -0.5f && sample <= static_cast<float>(in) - 0.5f)) continue;
    float total = 0.f;
    for (int64_t s = 0; s < in; ++s) total += m[o * in + s] = k.f(std::fabs(sample - static_cast<float>(s)) / kernel_scale);
    const bool keep = std::fabs(total) > 1000.f * FLT_EPSILON;
    for (int64_t s = 0; s < in; ++s) m[o * in + s] = keep ? m[o * in + s] / (total != 0.f ? total : 1.f) : 0.f;
  }
  return m;
}
// x with axis d replaced by m (out, in) applied along it.
Tensor along(const Tensor& x, int d, const std::vector<float>& m, int64_t out) {
  const int r = x.rank();
  const int64_t in = x.dim(d);
  std::vector<float> mt(static_cast<size_t>(in * out));  // (in, out)
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) mt[i * out + o] = m[o * in + i];
  std::vector<int> perm, back(r);
  for (int e = 0; e < r; ++e)
    if (e != d) perm.push_back(e);
  perm.push_back(d);
  for (int e = 0; e < r; ++e) back[perm[e]] = e;
  const Tensor y = ops::matmul(d == r - 1 ? x : ops::transpose(x, perm), Tensor::from_vector({in, out}, mt));
  return d == r - 1 ? y : ops::transpose(y, back);
}

// ---- resize
enum class Method { nearest, bilinear, bicubic, area, lanczos3, lanczos5, gaussian, mitchellcubic };
template <class T>
Method method_of(const Args<T>& a, const char* name) {
  const std::string m = text(a, name, "bilinear");
  static const std::pair<const char*, Method> names[] = {
      {"nearest", Method::nearest},   {"bilinear", Method::bilinear}, {"bicubic", Method::bicubic},
      {"area", Method::area},         {"lanczos3", Method::lanczos3}, {"lanczos5", Method::lanczos5},
      {"gaussian", Method::gaussian}, {"mitchellcubic", Method::mitchellcubic}};
  for (const auto& [n, v] : names)
    if (m == n && (!a.keras3() || (v != Method::gaussian && v != Method::mitchellcubic))) return v;
  a.fail(name, a.keras3() ? "one of bilinear, nearest, lanczos3, lanczos5, bicubic, area"
                          : "one of bilinear, nearest, bicubic, area, lanczos3, lanczos5, gaussian, mitchellcubic");
}
// x: (batch, h, w, c) -> (batch, oh, ow, c), as tf.image.resize (v2) computes it.
Tensor resize_nhwc(const Tensor& x, int64_t oh, int64_t ow, Method m, bool antialias) {
  if (m == Method::nearest) return ops::resize(x, oh, ow, ops::ResizeMethod::nearest);
  if (!antialias && m == Method::bilinear) return ops::resize(x, oh, ow, ops::ResizeMethod::bilinear);
  if (!antialias && m == Method::bicubic) return ops::resize(x, oh, ow, ops::ResizeMethod::bicubic);
  const int64_t h = x.dim(1), w = x.dim(2);
  if (m == Method::area) return along(along(x, 1, area_weights(h, oh), oh), 2, area_weights(w, ow), ow);
  KernelDef k{triangle, 1.f};
  if (m == Method::bicubic) k = {keys_cubic, 2.f};
  if (m == Method::lanczos3) k = {lanczos<3>, 3.f};
  if (m == Method::lanczos5) k = {lanczos<5>, 5.f};
  if (m == Method::gaussian) k = {gaussian, 1.5f};
  if (m == Method::mitchellcubic) k = {mitchell_cubic, 2.f};
  const float sh = static_cast<float>(oh) / static_cast<float>(h), sw = static_cast<float>(ow) / static_cast<float>(w);
  const Tensor y = along(x, 2, span_weights(w, ow, sw, k, antialias), ow);  // columns first, as TF
  return along(y, 1, span_weights(h, oh, sh, k, antialias), oh);
}
template <class T>
std::array<int64_t, 2> size_of(const Args<T>& a) {
  const std::vector<int64_t> s = a.template get<std::vector<int64_t>>("size", {});
  if (s.size() != 2 || s[0] <= 0 || s[1] <= 0) a.fail("size", "a pair of positive (height, width)");
  return {s[0], s[1]};
}
template <class T>
void check_resize(const Args<T>& a) {
  method_of(a, a.keras3() ? "interpolation" : "method");
  if (a.keras3()) {
    if (text(a, "fill_mode", "constant") != "constant") a.fail("fill_mode", "'constant' (the only one Keras supports)");
    if (a.get("crop_to_aspect_ratio", false) && a.get("pad_to_aspect_ratio", false))
      a.fail("pad_to_aspect_ratio", "compatible with crop_to_aspect_ratio=True (only one may be True)");
  } else if (a.get("preserve_aspect_ratio", false)) {
    a.fail("preserve_aspect_ratio", "supported by kerascpp (False only)");
  }
}
Shape resize_shape(const Args<Shape>& a) {
  Shape s = a.value("images");
  expect_images(s, a.who(), "images");
  check_resize(a);
  const auto [oh, ow] = size_of(a);
  const int ha = cf_of(a) ? static_cast<int>(s.size()) - 2 : static_cast<int>(s.size()) - 3;
  s[ha] = oh, s[ha + 1] = ow;
  return s;
}
// int32(float32(num) / den), as the TF backend computes the aspect-ratio boxes.
int64_t ratio(int64_t num, int64_t den) { return static_cast<int64_t>(static_cast<float>(num) / static_cast<float>(den)); }
Tensor resize(const Args<Tensor>& a) {
  const Tensor images = a.value("images");
  check_resize(a);
  const bool cf = cf_of(a);
  const auto [oh, ow] = size_of(a);
  Tensor x = to_nhwc(images, cf);
  const int64_t h = x.dim(1), w = x.dim(2);
  if (a.keras3() && a.get("crop_to_aspect_ratio", false)) {
    const int64_t ch = std::max<int64_t>(std::min(h, ratio(w * oh, ow)), 1), cw = std::max<int64_t>(std::min(w, ratio(h * ow, oh)), 1);
    x = ops::slice(x, {0, ratio(h - ch, 2), ratio(w - cw, 2), 0}, {x.dim(0), ch, cw, x.dim(3)});
  } else if (a.keras3() && a.get("pad_to_aspect_ratio", false)) {
    const int64_t ph = std::max(h, ratio(w * oh, ow)), pw = std::max(w, ratio(h * ow, oh));
    const int64_t hs = ratio(ph - h, 2), ws = ratio(pw - w, 2);  // Keras pads `start` on both sides
    if (hs > 0 || ws > 0) x = ops::pad(x, {{0, 0}, {hs, hs}, {ws, ws}, {0, 0}}, a.get<float>("fill_value", 0.f));
  }
  const Method m = method_of(a, a.keras3() ? "interpolation" : "method");
  return from_nhwc(resize_nhwc(x, oh, ow, m, a.get("antialias", false)), images.rank(), cf);
}

// tf.image.resize_with_pad: the largest resize that fits, then zeros around it (float32 arithmetic).
struct PadFit {
  int64_t rh, rw, top, left;
};
template <class T>
PadFit pad_fit(const Args<T>& a, int64_t h, int64_t w) {
  const int64_t th = a.template get<int64_t>("target_height", 0), tw = a.template get<int64_t>("target_width", 0);
  if (th <= 0) a.fail("target_height", "positive");
  if (tw <= 0) a.fail("target_width", "positive");
  const float fh = static_cast<float>(h), fw = static_cast<float>(w);
  const float r = std::max(fw / static_cast<float>(tw), fh / static_cast<float>(th));
  const float rh = fh / r, rw = fw / r;
  return {static_cast<int64_t>(std::floor(rh)), static_cast<int64_t>(std::floor(rw)),
          std::max<int64_t>(0, static_cast<int64_t>(std::floor((static_cast<float>(th) - rh) / 2))),
          std::max<int64_t>(0, static_cast<int64_t>(std::floor((static_cast<float>(tw) - rw) / 2)))};
}
Shape resize_with_pad_shape(const Args<Shape>& a) {
  Shape s = a.value("image");
  expect_images(s, a.who(), "image");
  method_of(a, "method");
  const int ha = static_cast<int>(s.size()) - 3;
  if (s[ha] >= 0 && s[ha + 1] >= 0) pad_fit(a, s[ha], s[ha + 1]);
  s[ha] = a.get<int64_t>("target_height", 0), s[ha + 1] = a.get<int64_t>("target_width", 0);
  return s;
}
Tensor resize_with_pad(const Args<Tensor>& a) {
  const Tensor image = a.value("image");
  const Tensor x = to_nhwc(image, false);
  const PadFit f = pad_fit(a, x.dim(1), x.dim(2));
  const int64_t th = a.get<int64_t>("target_height", 0), tw = a.get<int64_t>("target_width", 0);
  if (f.rh <= 0 || f.rw <= 0 || f.top + f.rh > th || f.left + f.rw > tw) a.fail("target_height", "large enough to fit the image");
  const Tensor y = resize_nhwc(x, f.rh, f.rw, method_of(a, "method"), a.get("antialias", false));
  return from_nhwc(ops::pad(y, {{0, 0}, {f.top, th - f.rh - f.top}, {f.left, tw - f.rw - f.left}, {0, 0}}), image.rank(), false);
}

// ---- scale_and_translate (Keras 3): images of any rank, each of spatial_dims resampled.
template <class T>
KernelDef st_kernel(const Args<T>& a) {
  const std::string m = text(a, "method", "");
  if (m == "linear" || m == "bilinear" || m == "trilinear") return {triangle, 1.f};
  if (m == "cubic" || m == "bicubic" || m == "tricubic") return {keys_cubic, 2.f};
  if (m == "lanczos3") return {lanczos<3>, 3.f};
  if (m == "lanczos5") return {lanczos<5>, 5.f};
  a.fail("method", "one of linear, bilinear, trilinear, cubic, bicubic, tricubic, lanczos3, lanczos5");
}
// output_shape: a list of ints, null (None) for a dim left as it is (-1).
template <class T>
std::vector<int64_t> st_out(const Args<T>& a) {
  const Json& j = a.json("output_shape");
  if (!j.is_array()) a.fail("output_shape", "a list of ints");
  std::vector<int64_t> out;
  for (const Json& e : j) {
    if (!e.is_null() && !e.is_number_integer()) a.fail("output_shape", "a list of ints");
    out.push_back(e.is_null() ? -1 : e.get<int64_t>());
  }
  return out;
}
Shape st_shape(const Args<Shape>& a) {
  st_kernel(a);
  const Shape x = a.value("images");
  const std::vector<int64_t> out = st_out(a);
  if (out.size() != x.size()) a.fail("output_shape", "of the images' rank " + std::to_string(x.size()));
  Shape s = x;
  for (int d : a.axes("spatial_dims")) s[ops::normalize_axis(d, static_cast<int>(x.size()))] = out[ops::normalize_axis(d, static_cast<int>(x.size()))];
  return s;
}
Tensor st(const Args<Tensor>& a) {
  const KernelDef k = st_kernel(a);
  Tensor x = a.value("images");
  const std::vector<int64_t> out = st_out(a);
  if (out.size() != static_cast<size_t>(x.rank())) a.fail("output_shape", "of the images' rank " + std::to_string(x.rank()));
  const std::vector<int> dims = a.axes("spatial_dims");
  const Tensor scale = a.value("scale"), translation = a.value("translation");
  if (scale.size() != static_cast<int64_t>(dims.size())) a.fail("scale", "one value per spatial dim");
  if (translation.size() != static_cast<int64_t>(dims.size())) a.fail("translation", "one value per spatial dim");
  for (size_t i = 0; i < dims.size(); ++i) {
    const int d = ops::normalize_axis(dims[i], x.rank());
    if (out[d] <= 0) a.fail("output_shape", "positive along the spatial dims");
    x = along(x, d, keras_weights(x.dim(d), out[d], scale.data<float>()[i], translation.data<float>()[i], k, a.get("antialias", true)), out[d]);
  }
  return x;
}

// ---- affine_transform / perspective_transform: TF's ImageProjectiveTransformV3.
enum class Fill { constant, nearest, wrap, reflect };
template <class T>
Fill fill_of(const Args<T>& a) {
  const std::string f = text(a, "fill_mode", "constant");
  if (f == "constant") return Fill::constant;
  if (f == "nearest") return Fill::nearest;
  if (f == "wrap") return Fill::wrap;
  if (f == "reflect") return Fill::reflect;
  a.fail("fill_mode", "one of constant, nearest, wrap, reflect");
}
// An input coordinate outside [0, len - 1] mapped back as ImageProjectiveTransform maps it.
float map_coordinate(float v, int64_t len, Fill fill) {
  const float n = static_cast<float>(len);
  if (fill == Fill::reflect && len > 1) {
    const float period = 2 * n;
    if (v < 0) {
      if (v < -period) v += period * std::floor(-v / period);
      v = v < -n ? v + period : -v - 1;
    } else if (v > n - 1) {
      v -= period * std::floor(v / period);
      if (v >= n) v = period - v - 1;
    }
  } else if (fill == Fill::wrap && len > 1) {
    const float sz = n - 1;
    if (v < 0) v += n * (std::floor(-v / sz) + 1);
    else if (v > n - 1) v -= n * std::floor(v / sz);
  } else if (fill == Fill::constant) {
    return std::clamp(v, -2.f, n + 1);  // out of range reads fill_value
  }
  return std::clamp(v, 0.f, n - 1);
}
// One output's source taps: plane index (y * w + x) or -1 (fill_value), weight.
struct Tap {
  int64_t at;
  float w;
};
// x (batch, h, w, c); t: 8 per image, or 8 for all. Records the backward to x.
Tensor project(const Tensor& x, const std::vector<float>& t, bool nearest, Fill fill, float fill_value) {
  const int64_t b = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3), per = nearest ? 1 : 4;
  const bool shared = t.size() == 8;
  std::vector<Tap> taps(static_cast<size_t>(b * h * w * per), Tap{-1, 0.f});
  Tensor y = Tensor::empty(x.shape());
  const float* in = x.data<float>();
  float* out = y.data<float>();
  auto at = [&](int64_t yy, int64_t xx) -> int64_t { return yy < 0 || yy >= h || xx < 0 || xx >= w ? -1 : yy * w + xx; };
  for (int64_t n = 0; n < b; ++n) {
    const float* m = t.data() + (shared ? 0 : 8 * n);
    const float* plane = in + n * h * w * c;
    for (int64_t oy = 0; oy < h; ++oy)
      for (int64_t ox = 0; ox < w; ++ox) {
        const int64_t o = (n * h + oy) * w + ox;
        Tap* tp = &taps[o * per];
        float* dst = out + o * c;
        const float fx = static_cast<float>(ox), fy = static_cast<float>(oy);
        const float k = m[6] * fx + m[7] * fy + 1.f;
        const float px = (m[0] * fx + m[1] * fy + m[2]) / k, py = (m[3] * fx + m[4] * fy + m[5]) / k;
        if (k == 0.f || !std::isfinite(px) || !std::isfinite(py)) {
          for (int64_t ch = 0; ch < c; ++ch) dst[ch] = fill_value;
          continue;
        }
        const float ix = map_coordinate(px, w, fill), iy = map_coordinate(py, h, fill);
        if (nearest) {
          tp[0] = {at(static_cast<int64_t>(std::round(iy)), static_cast<int64_t>(std::round(ix))), 1.f};
          for (int64_t ch = 0; ch < c; ++ch) dst[ch] = tp[0].at < 0 ? fill_value : plane[tp[0].at * c + ch];
          continue;
        }
        const float y0 = std::floor(iy), x0 = std::floor(ix);
        const auto yi = static_cast<int64_t>(y0), xi = static_cast<int64_t>(x0);
        const float wx0 = x0 + 1 - ix, wx1 = ix - x0, wy0 = y0 + 1 - iy, wy1 = iy - y0;
        tp[0] = {at(yi, xi), wy0 * wx0}, tp[1] = {at(yi, xi + 1), wy0 * wx1};
        tp[2] = {at(yi + 1, xi), wy1 * wx0}, tp[3] = {at(yi + 1, xi + 1), wy1 * wx1};
        for (int64_t ch = 0; ch < c; ++ch) {
          auto v = [&](int q) { return tp[q].at < 0 ? fill_value : plane[tp[q].at * c + ch]; };
          dst[ch] = wy0 * (wx0 * v(0) + wx1 * v(1)) + wy1 * (wx0 * v(2) + wx1 * v(3));
        }
      }
  }
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("image_projective_transform", {x}, y, [taps = std::move(taps), shape = x.shape(), per](const Tensor& dy) {
      Tensor dx = Tensor::zeros(shape);
      const int64_t hw = shape[1] * shape[2], c = shape[3];
      for (size_t o = 0; o < taps.size() / per; ++o) {
        const int64_t n = static_cast<int64_t>(o) / hw;
        for (int64_t q = 0; q < per; ++q) {
          const Tap& tp = taps[o * per + q];
          if (tp.at < 0 || tp.w == 0.f) continue;
          float* d = dx.data<float>() + (n * hw + tp.at) * c;
          const float* g = dy.data<float>() + o * c;
          for (int64_t ch = 0; ch < c; ++ch) d[ch] += tp.w * g[ch];
        }
      }
      return ops::Grads{dx};
    });
  return y;
}
template <class T>
bool nearest_of(const Args<T>& a) {
  const std::string i = text(a, "interpolation", "bilinear");
  if (i != "nearest" && i != "bilinear") a.fail("interpolation", "'nearest' or 'bilinear'");
  return i == "nearest";
}
Shape affine_shape(const Args<Shape>& a) {
  const Shape s = a.value("images"), t = a.value("transform");
  expect_images(s, a.who(), "images");
  nearest_of(a), fill_of(a);
  if ((t.size() != 1 && t.size() != 2) || t.back() != 8) a.fail("transform", "of shape (8,) or (batch, 8)");
  return s;
}
Tensor transformed(const Args<Tensor>& a, const Tensor& images, const std::vector<float>& t, Fill fill) {
  const bool cf = cf_of(a);
  const Tensor x = to_nhwc(images, cf);
  if (t.size() != 8 && static_cast<int64_t>(t.size()) != 8 * x.dim(0)) a.fail("transform", "one transform, or one per image");
  return from_nhwc(project(x, t, nearest_of(a), fill, a.get<float>("fill_value", 0.f)), images.rank(), cf);
}
Tensor affine(const Args<Tensor>& a) {
  const Tensor t = a.value("transform");
  if ((t.rank() != 1 && t.rank() != 2) || t.dim(-1) != 8) a.fail("transform", "of shape (8,) or (batch, 8)");
  return transformed(a, a.value("images"), std::vector<float>(t.data<float>(), t.data<float>() + t.size()), fill_of(a));
}
// compute_homography_matrix: the 8 coefficients solving the 4 point pairs (Gaussian elimination with
// partial pivoting in double).
std::vector<float> homographies(const Tensor& start, const Tensor& end) {
  const int64_t n = start.size() / 8;
  std::vector<float> t;
  for (int64_t i = 0; i < n; ++i) {
    const float* s = start.data<float>() + 8 * i;
    const float* e = end.data<float>() + 8 * i;
    double m[8][9] = {};
    for (int p = 0; p < 4; ++p) {
      const double ex = e[2 * p], ey = e[2 * p + 1], sx = s[2 * p], sy = s[2 * p + 1];
      const double r0[9] = {ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey, sx}, r1[9] = {0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey, sy};
      std::copy(r0, r0 + 9, m[2 * p]), std::copy(r1, r1 + 9, m[2 * p + 1]);
    }
    for (int col = 0; col < 8; ++col) {
      int piv = col;
      for (int r = col + 1; r < 8; ++r)
        if (std::fabs(m[r][col]) > std::fabs(m[piv][col])) piv = r;
      std::swap(m[col], m[piv]);
      KCPP_CHECK(m[col][col] != 0.0, ValueError, "perspective_transform: the points give a singular system");
      for (int r = 0; r < 8; ++r)
        if (r != col) {
          const double f = m[r][col] / m[col][col];
          for (int k = col; k < 9; ++k) m[r][k] -= f * m[col][k];
        }
    }
    for (int k = 0; k < 8; ++k) t.push_back(static_cast<float>(m[k][8] / m[k][k]));
  }
  return t;
}
bool points_ok(const Shape& p) { return (p.size() == 2 || p.size() == 3) && p[p.size() - 2] == 4 && p.back() == 2; }
Shape perspective_shape(const Args<Shape>& a) {
  const Shape s = a.value("images"), p = a.value("start_points"), q = a.value("end_points");
  expect_images(s, a.who(), "images");
  nearest_of(a);
  if (!points_ok(p)) a.fail("start_points", "of shape (4, 2) or (batch, 4, 2)");
  if (p != q) a.fail("end_points", "of start_points' shape");
  return s;
}
Tensor perspective(const Args<Tensor>& a) {
  const Tensor p = a.value("start_points"), q = a.value("end_points");
  if (!points_ok(p.shape())) a.fail("start_points", "of shape (4, 2) or (batch, 4, 2)");
  if (p.shape() != q.shape()) a.fail("end_points", "of start_points' shape");
  return transformed(a, a.value("images"), homographies(p, q), Fill::constant);
}

// ---- map_coordinates (the TF backend's): per dim an index and weight (order 0) or two (order 1),
// each index mapped by the fill mode; constant mode reads fill_value where any index is outside.
enum class MapFill { constant, nearest, wrap, mirror, reflect };
template <class T>
MapFill map_fill_of(const Args<T>& a) {
  const std::string f = text(a, "fill_mode", "constant");
  if (f == "constant") return MapFill::constant;
  if (f == "nearest") return MapFill::nearest;
  if (f == "wrap") return MapFill::wrap;
  if (f == "mirror") return MapFill::mirror;
  if (f == "reflect") return MapFill::reflect;
  a.fail("fill_mode", "one of constant, nearest, wrap, mirror, reflect");
}
template <class T>
int order_of(const Args<T>& a) {
  const int o = a.template get<int>("order", -1);
  if (o != 0 && o != 1) a.fail("order", "0 or 1 (map_coordinates supports order <= 1)");
  return o;
}
Shape map_shape(const Args<Shape>& a) {
  const Shape x = a.value("inputs"), c = a.value("coordinates");
  order_of(a), map_fill_of(a);
  if (c.size() < 2 || c[0] != static_cast<int64_t>(x.size())) a.fail("coordinates", "of shape (rank of inputs, ...)");
  return Shape(c.begin() + 1, c.end());
}
int64_t floor_mod(int64_t a, int64_t n) { return ((a % n) + n) % n; }
// The index the fill mode reads for index i of a dim of `size`; valid false where constant fills.
int64_t fix_index(int64_t i, int64_t size, MapFill f, bool* valid, const std::string& who) {
  *valid = true;
  switch (f) {
    case MapFill::constant:
      *valid = i >= 0 && i < size;
      return std::clamp<int64_t>(i, 0, size - 1);
    case MapFill::nearest:
      return std::clamp<int64_t>(i, 0, size - 1);
    case MapFill::wrap:
      return floor_mod(i, size);
    case MapFill::mirror:
    case MapFill::reflect: {
      const int64_t mod = floor_mod(std::llabs(i), 2 * size);
      int64_t r = mod < size ? mod : 2 * size - mod;
      if (f == MapFill::reflect && mod >= size) r -= 1;
      KCPP_CHECK(r >= 0 && r < size, ValueError, who, ": fill_mode 'mirror' reads index ", r, " outside a dim of size ", size,
                 " (TensorFlow's gather_nd fails alike)");
      return r;
    }
  }
  return i;
}
Tensor map_coordinates(const Args<Tensor>& a) {
  const Tensor x = a.value("inputs"), coords = a.value("coordinates");
  const int order = order_of(a);
  const MapFill fill = map_fill_of(a);
  const float fill_value = a.get<float>("fill_value", 0.f);
  const int r = x.rank();
  if (coords.rank() < 2 || coords.dim(0) != r) a.fail("coordinates", "of shape (rank of inputs, ...)");
  const int64_t m = coords.size() / r, combos = int64_t{1} << (order * r);
  std::vector<int64_t> strides(r, 1);
  for (int d = r - 2; d >= 0; --d) strides[d] = strides[d + 1] * x.dim(d + 1);
  Shape out_shape(coords.shape().begin() + 1, coords.shape().end());
  Tensor y = Tensor::empty(out_shape);
  // Per point, per combination: the flat index (-1: fill) and weight; per dim: dw of that dim's factor.
  std::vector<Tap> taps(static_cast<size_t>(m * combos));
  std::vector<float> lower_w(static_cast<size_t>(m * r));
  std::vector<int64_t> fixed(static_cast<size_t>(r * 2));
  std::vector<float> wts(static_cast<size_t>(r * 2));
  std::vector<char> ok(static_cast<size_t>(r * 2));
  const float* c = coords.data<float>();
  for (int64_t p = 0; p < m; ++p) {
    for (int d = 0; d < r; ++d) {
      const float v = c[d * m + p];
      int64_t base;
      if (order == 0) {
        base = static_cast<int64_t>(std::nearbyint(v));  // tf.round: half to even
        wts[2 * d] = 1.f;
      } else {
        const float lo = std::floor(v);
        base = static_cast<int64_t>(lo);
        wts[2 * d + 1] = v - lo, wts[2 * d] = 1 - (v - lo);
        lower_w[p * r + d] = wts[2 * d];
      }
      for (int k = 0; k <= order; ++k) {
        bool valid;
        fixed[2 * d + k] = fix_index(base + k, x.dim(d), fill, &valid, a.who());
        ok[2 * d + k] = valid;
      }
    }
    float sum = 0.f;
    for (int64_t q = 0; q < combos; ++q) {
      int64_t flat = 0;
      bool valid = true;
      float w = 0.f;
      for (int d = 0; d < r; ++d) {
        const int k = order == 0 ? 0 : static_cast<int>((q >> (r - 1 - d)) & 1);  // itertools.product order
        flat += fixed[2 * d + k] * strides[d];
        valid = valid && ok[2 * d + k];
        w = d == 0 ? wts[2 * d + k] : w * wts[2 * d + k];
      }
      taps[p * combos + q] = {valid ? flat : -1, w};
      const float term = w * (valid ? x.data<float>()[flat] : fill_value);
      sum = q == 0 ? term : sum + term;
    }
    y.data<float>()[p] = sum;
  }
  if (ops::Recorder* rec = ops::tape_for({&x, &coords}))
    rec->record("map_coordinates", {x, coords}, y,
                [x, coords, taps = std::move(taps), lower_w = std::move(lower_w), m, combos, r, order, fill_value](const Tensor& dy) {
                  Tensor dx = Tensor::zeros(x.shape());
                  Tensor dc = Tensor::zeros(coords.shape());
                  for (int64_t p = 0; p < m; ++p) {
                    const float g = dy.data<float>()[p];
                    for (int64_t q = 0; q < combos; ++q) {
                      const Tap& t = taps[p * combos + q];
                      if (t.at >= 0) dx.data<float>()[t.at] += t.w * g;
                      if (order == 0) continue;
                      const float v = t.at >= 0 ? x.data<float>()[t.at] : fill_value;
                      for (int d = 0; d < r; ++d) {  // the product without dim d's factor, times its slope -1 / +1
                        const bool upper = (q >> (r - 1 - d)) & 1;
                        float rest = 1.f;
                        for (int e = 0; e < r; ++e)
                          if (e != d) {
                            const bool ue = (q >> (r - 1 - e)) & 1;
                            rest *= ue ? 1.f - lower_w[p * r + e] : lower_w[p * r + e];
                          }
                        dc.data<float>()[d * m + p] += (upper ? 1.f : -1.f) * rest * v * g;
                      }
                    }
                  }
                  return ops::Grads{dx, order == 0 ? Tensor() : dc};
                });
  return y;
}

Shape elastic_refused(const Args<Shape>& a) {
  KCPP_THROW(NotImplementedError, a.who(),
             " is not supported by kerascpp: it displaces pixels by noise drawn from TensorFlow's random stream "
             "(tf.random.stateless_normal), which kerascpp does not reproduce, so its output would differ at inference too");
}
Tensor elastic_never(const Args<Tensor>& a) {
  KCPP_THROW(NotImplementedError, a.who(), " is not supported by kerascpp (TensorFlow's random stream)");
}

}  // namespace

std::vector<OpDef> image_sampling_ops() {
  return {
      OpDef{"ops.image.Resize",
            nullptr,
            {"images", "size", "interpolation", "antialias", "crop_to_aspect_ratio", "pad_to_aspect_ratio", "fill_mode",
             "fill_value", "data_format"},
            {},
            resize_shape,
            resize},
      OpDef{nullptr, "image.resize", {"images", "size", "method", "preserve_aspect_ratio", "antialias"}, {}, resize_shape, resize},
      OpDef{nullptr, "image.resize_with_pad", {"image", "target_height", "target_width", "method", "antialias"}, {},
            resize_with_pad_shape, resize_with_pad},
      OpDef{"ops.image.ScaleAndTranslate",
            nullptr,
            {"images", "output_shape", "scale", "translation", "spatial_dims", "method", "antialias"},
            {},
            st_shape,
            st},
      OpDef{"ops.image.AffineTransform",
            nullptr,
            {"images", "transform", "interpolation", "fill_mode", "fill_value", "data_format"},
            {},
            affine_shape,
            affine},
      OpDef{"ops.image.PerspectiveTransform",
            nullptr,
            {"images", "start_points", "end_points", "interpolation", "fill_value", "data_format"},
            {},
            perspective_shape,
            perspective},
      OpDef{"ops.image.MapCoordinates", nullptr, {"inputs", "coordinates", "order", "fill_mode", "fill_value"}, {}, map_shape,
            map_coordinates},
      OpDef{"ops.image.ElasticTransform",
            nullptr,
            {"images", "alpha", "sigma", "interpolation", "fill_mode", "fill_value", "seed", "data_format"},
            {},
            elastic_refused,
            elastic_never},
  };
}

}  // namespace kerascpp::layers::op_nodes
