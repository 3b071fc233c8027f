// Image op nodes (keras.ops.image as the TensorFlow backend computes it, keras/src/backend/tensorflow/
// image.py, and the tf.image functions tf_keras records), part 1: colour spaces (rgb_to_grayscale,
// rgb_to_hsv, hsv_to_rgb, grayscale_to_rgb), pad / crop (pad_images, crop_images, pad_to_bounding_box,
// crop_to_bounding_box, central_crop), gaussian_blur, ssim, extract_patches, sobel_edges and tf.image's
// adjust_brightness / adjust_contrast / adjust_hue / adjust_gamma / per_image_standardization. Built from
// differentiable ops, except the HSV conversions, which record their per-pixel Jacobian. Part 2
// (image_ops_sampling.cpp): resize, affine / perspective transforms, map_coordinates, scale_and_translate.
#include <array>
#include <cmath>
#include <optional>

#include "layers/op_nodes/op_node.h"
#include "layers/preprocessing/image_augmentation/color_space.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
std::vector<OpDef> image_sampling_ops();  // image_ops_sampling.cpp

// What both parts share.
namespace image_detail {
// Keras's data_format: null is the backend's default, channels_last.
bool is_channels_first(const Json& data_format, const std::string& who) {
  if (data_format.is_null()) return false;
  KCPP_CHECK(data_format.is_string() &&
                 (data_format.get<std::string>() == "channels_last" || data_format.get<std::string>() == "channels_first"),
             ValueError, who, ": argument 'data_format' is not 'channels_last' or 'channels_first'. Received: data_format=",
             data_format.dump());
  return data_format.get<std::string>() == "channels_first";
}
void expect_images(const Shape& s, const std::string& who, const char* name) {
  KCPP_CHECK(s.size() == 3 || s.size() == 4, ValueError, who, ": argument '", name,
             "' is not rank 3 (single image) or rank 4 (batch of images). Received: ", name, ".shape=", shape_str(s));
}
// Rank 3 or 4 images as (batch, h, w, c), and back.
Tensor to_nhwc(const Tensor& x, bool cf) {
  Tensor y = x;
  if (y.rank() == 3) {
    Shape s = y.shape();
    s.insert(s.begin(), 1);
    y = y.reshape(s);
  }
  return cf ? ops::transpose(y, {0, 2, 3, 1}) : y;
}
Tensor from_nhwc(const Tensor& y, int rank, bool cf) {
  Tensor z = cf ? ops::transpose(y, {0, 3, 1, 2}) : y;
  if (rank == 3) {
    Shape s = z.shape();
    s.erase(s.begin());
    z = z.reshape(s);
  }
  return z;
}
}  // namespace image_detail

namespace {
using namespace image_detail;  // NOLINT

template <class T>
bool cf_of(const Args<T>& a) {
  return is_channels_first(a.json("data_format"), a.who());
}
// The channel axis of rank-3/4 images.
int channel_axis(int rank, bool cf) { return cf ? rank - 3 : rank - 1; }

Tensor scalar(float v) { return Tensor::from_vector({}, {v}); }
Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::multiply, a, b); }
Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::subtract, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::divide, a, b); }

// ---- rgb_to_grayscale: 0.2989 r + 0.5870 g + 0.1140 b along the channel axis, kept as 1 channel.
Tensor grayscale_along(const Tensor& x, int axis) {
  Shape ws(x.rank(), 1);
  ws[axis] = 3;
  return ops::sum(mul(x, Tensor::from_vector(ws, {0.2989f, 0.5870f, 0.1140f})), axis, true);
}
Shape grayscale_shape(const Args<Shape>& a) {
  Shape s = a.value("images");
  if (a.keras3()) {
    expect_images(s, a.who(), "images");
  } else {
    expect_rank(a, s, 1, "images");
  }
  const int ax = a.keras3() ? channel_axis(static_cast<int>(s.size()), cf_of(a)) : static_cast<int>(s.size()) - 1;
  if (a.keras3() ? s[ax] != 1 && s[ax] != 3 : s[ax] != 3)
    a.fail("images", "of " + std::string(a.keras3() ? "1 or 3" : "3") + " channels (shape " + shape_str(s) + ")");
  s[ax] = 1;
  return s;
}
Tensor grayscale(const Args<Tensor>& a) {
  const Tensor x = a.value("images");
  if (a.keras3() ? x.rank() != 3 && x.rank() != 4 : x.rank() < 1) a.fail("images", "of rank 3 or 4");
  if (const int64_t c = x.dim(a.keras3() ? channel_axis(x.rank(), cf_of(a)) : x.rank() - 1); c != 3 && (c != 1 || !a.keras3()))
    a.fail("images", "of " + std::string(a.keras3() ? "1 or 3" : "3") + " channels (shape " + shape_str(x.shape()) + ")");
  const int ax = a.keras3() ? channel_axis(x.rank(), cf_of(a)) : x.rank() - 1;
  return x.dim(ax) == 1 ? x : grayscale_along(x, ax);
}
// tf.image.grayscale_to_rgb: the one channel three times.
Shape gray_to_rgb_shape(const Args<Shape>& a) {
  Shape s = a.value("images");
  expect_rank(a, s, 2, "images");
  if (s.back() != 1) a.fail("images", "of 1 channel (shape " + shape_str(s) + ")");
  s.back() = 3;
  return s;
}
Tensor gray_to_rgb(const Args<Tensor>& a) {
  const Tensor x = a.value("images");
  std::vector<int64_t> reps(x.rank(), 1);
  reps.back() = 3;
  return ops::tile(x, reps);
}

// ---- rgb_to_hsv / hsv_to_rgb: TensorFlow's kernels per pixel (color_space.h); the backward multiplies
// by each pixel's Jacobian, found by running the same formulas on dual numbers.
struct Dual {
  float v;
  std::array<float, 3> d;
};
Dual operator+(Dual a, Dual b) { return {a.v + b.v, {a.d[0] + b.d[0], a.d[1] + b.d[1], a.d[2] + b.d[2]}}; }
Dual operator-(Dual a, Dual b) { return {a.v - b.v, {a.d[0] - b.d[0], a.d[1] - b.d[1], a.d[2] - b.d[2]}}; }
Dual operator*(Dual a, Dual b) {
  Dual r{a.v * b.v, {}};
  for (int k = 0; k < 3; ++k) r.d[k] = a.d[k] * b.v + a.v * b.d[k];
  return r;
}
Dual operator/(Dual a, Dual b) {
  Dual r{a.v / b.v, {}};
  for (int k = 0; k < 3; ++k) r.d[k] = (a.d[k] * b.v - a.v * b.d[k]) / (b.v * b.v);
  return r;
}
Dual constant(float v) { return {v, {0.f, 0.f, 0.f}}; }
Dual dmax(Dual a, Dual b) { return a.v >= b.v ? a : b; }
Dual dmin(Dual a, Dual b) { return a.v <= b.v ? a : b; }
Dual dabs(Dual a) { return a.v < 0 ? constant(0.f) - a : a; }
Dual dclamp01(Dual a) { return a.v < 0 ? constant(0.f) : a.v > 1 ? constant(1.f) : a; }

std::array<Dual, 3> rgb_to_hsv_dual(Dual r, Dual g, Dual b) {
  const Dual v = dmax(r, dmax(g, b)), range = v - dmin(r, dmin(g, b));
  const Dual s = v.v > 0.f ? range / v : constant(0.f);
  Dual h = constant(0.f);
  if (range.v > 0.f) {
    const Dual six = constant(6.f) * range;
    h = r.v == v.v ? (g - b) / six : g.v == v.v ? (b - r) / six + constant(2.f / 6.f) : (r - g) / six + constant(4.f / 6.f);
  }
  return {h, s, v};
}
std::array<Dual, 3> hsv_to_rgb_dual(Dual h, Dual s, Dual v) {
  const Dual dh = h * constant(6.f), one = constant(1.f), two = constant(2.f);
  const Dual dr = dclamp01(dabs(dh - constant(3.f)) - one), dg = dclamp01(two - dabs(dh - two)),
             db = dclamp01(two - dabs(dh - constant(4.f)));
  const Dual one_s = one - s;
  return {(one_s + s * dr) * v, (one_s + s * dg) * v, (one_s + s * db) * v};
}

// x: (..., 3), the channels last.
template <bool kToHsv>
Tensor convert_pixels(const Tensor& x) {
  Tensor y = Tensor::empty(x.shape());
  const int64_t n = x.size() / 3;
  const float* in = x.data<float>();
  float* out = y.data<float>();
  for (int64_t p = 0; p < n; ++p) {
    const float* q = in + 3 * p;
    const std::array<float, 3> o = kToHsv ? color::rgb_to_hsv(q[0], q[1], q[2]) : color::hsv_to_rgb(q[0], q[1], q[2]);
    std::copy(o.begin(), o.end(), out + 3 * p);
  }
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record(kToHsv ? "rgb_to_hsv" : "hsv_to_rgb", {x}, y, [x, n](const Tensor& dy) {
      Tensor dx = Tensor::empty(x.shape());
      for (int64_t p = 0; p < n; ++p) {
        const float* q = x.data<float>() + 3 * p;
        const Dual a{q[0], {1.f, 0.f, 0.f}}, b{q[1], {0.f, 1.f, 0.f}}, c{q[2], {0.f, 0.f, 1.f}};
        const std::array<Dual, 3> o = kToHsv ? rgb_to_hsv_dual(a, b, c) : hsv_to_rgb_dual(a, b, c);
        for (int k = 0; k < 3; ++k) {
          float s = 0.f;
          for (int i = 0; i < 3; ++i) s += dy.data<float>()[3 * p + i] * o[i].d[k];
          dx.data<float>()[3 * p + k] = s;
        }
      }
      return ops::Grads{dx};
    });
  return y;
}
template <bool kToHsv>
Tensor hsv(const Args<Tensor>& a) {
  const Tensor x = a.value("images");
  const bool cf = a.keras3() && cf_of(a);
  if (a.keras3() ? x.rank() != 3 && x.rank() != 4 : x.rank() < 1) a.fail("images", "of rank 3 or 4");
  if (x.dim(cf ? x.rank() - 3 : x.rank() - 1) != 3) a.fail("images", "of 3 channels (shape " + shape_str(x.shape()) + ")");
  if (!cf) return convert_pixels<kToHsv>(x);
  std::vector<int> to_last, back;  // the channel axis (rank - 3) last, and back
  for (int d = 0; d < x.rank(); ++d)
    if (d != x.rank() - 3) to_last.push_back(d);
  to_last.push_back(x.rank() - 3);
  back.resize(x.rank());
  for (int d = 0; d < x.rank(); ++d) back[to_last[d]] = d;
  return ops::transpose(convert_pixels<kToHsv>(ops::transpose(x, to_last)), back);
}
Shape hsv_shape(const Args<Shape>& a) {
  const Shape s = a.value("images");
  if (a.keras3()) expect_images(s, a.who(), "images");
  else expect_rank(a, s, 1, "images");
  const int ax = a.keras3() ? channel_axis(static_cast<int>(s.size()), cf_of(a)) : static_cast<int>(s.size()) - 1;
  if (s[ax] != 3) a.fail("images", "of 3 channels (shape " + shape_str(s) + ")");
  return s;
}

// ---- tf.image.adjust_saturation: TF's AdjustSaturation kernel per pixel (its own rgb_to_hsv, S scaled and
// clipped to [0, 1], hsv_to_rgb by hue sextant), on dual numbers: the value is the float computation,
// the tangents the Jacobian for the backward.
std::array<Dual, 3> saturate(Dual r, Dual g, Dual b, float k) {
  const Dual v = dmax(r, dmax(g, b)), range = v - dmin(r, dmin(g, b));
  Dual s = v.v > 0.f ? range / v : constant(0.f);
  const Dual norm = constant(1.f) / (constant(6.f) * range);
  Dual h = r.v == v.v ? norm * (g - b) : g.v == v.v ? norm * (b - r) + constant(2.f / 6.f) : norm * (r - g) + constant(4.f / 6.f);
  if (range.v <= 0.f) h = constant(0.f);
  if (h.v < 0.f) h = h + constant(1.f);
  s = dclamp01(s * constant(k));
  const Dual c = s * v, m = v - c, dh = h * constant(6.f);
  Dual fmodu = dh;
  while (fmodu.v <= 0.f) fmodu = fmodu + constant(2.f);
  while (fmodu.v >= 2.f) fmodu = fmodu - constant(2.f);
  const Dual x = c * (constant(1.f) - dabs(fmodu - constant(1.f))), z = constant(0.f);
  std::array<Dual, 3> o;
  switch (static_cast<int>(dh.v)) {
    case 0: o = {c, x, z}; break;
    case 1: o = {x, c, z}; break;
    case 2: o = {z, c, x}; break;
    case 3: o = {z, x, c}; break;
    case 4: o = {x, z, c}; break;
    case 5: o = {c, z, x}; break;
    default: o = {z, z, z};
  }
  return {o[0] + m, o[1] + m, o[2] + m};
}
// ---- tf.image.adjust_hue: TF's AdjustHue kernel per pixel: the hue (in sextants, [0, 6)) from the max,
// middle and min channels, shifted by 6 delta and wrapped, and the pixel rebuilt from the same min and max.
std::array<Dual, 3> shift_hue(Dual r, Dual g, Dual b, float delta) {
  Dual hi, mid, lo;
  int cat;
  if (r.v < g.v) {
    if (b.v < r.v) hi = g, mid = r, lo = b, cat = 1;
    else if (b.v > g.v) hi = b, mid = g, lo = r, cat = 3;
    else hi = g, mid = b, lo = r, cat = 2;
  } else {
    if (b.v < g.v) hi = r, mid = g, lo = b, cat = 0;
    else if (b.v > r.v) hi = b, mid = r, lo = g, cat = 4;
    else hi = r, mid = b, lo = g, cat = 5;
  }
  if (hi.v == lo.v) return {r, g, b};  // grey: h = 0, rebuilt as it was
  const Dual ratio = (mid - lo) / (hi - lo);
  Dual h = constant(static_cast<float>(cat)) + ((cat & 1) == 0 ? ratio : constant(1.f) - ratio);
  h = h + constant(delta * 6.f);
  while (h.v < 0.f) h = h + constant(6.f);
  while (h.v >= 6.f) h = h - constant(6.f);
  const int c = static_cast<int>(h.v);
  Dual t = h - constant(static_cast<float>(c));
  if ((c & 1) != 0) t = constant(1.f) - t;
  const Dual m = lo + t * (hi - lo);
  switch (c) {
    case 0: return {hi, m, lo};
    case 1: return {m, hi, lo};
    case 2: return {lo, hi, m};
    case 3: return {lo, m, hi};
    case 4: return {m, lo, hi};
    default: return {hi, lo, m};
  }
}

// Both adjustments, pixel by pixel through f, with the per-pixel Jacobian for the backward.
template <typename F>
Tensor per_pixel(const Tensor& x, const char* name, F f) {
  const int64_t n = x.size() / 3;
  Tensor y = Tensor::empty(x.shape());
  std::vector<float> jac(static_cast<size_t>(9 * n));  // per pixel d out_i / d in_j
  for (int64_t p = 0; p < n; ++p) {
    const float* q = x.data<float>() + 3 * p;
    const std::array<Dual, 3> o = f(Dual{q[0], {1.f, 0.f, 0.f}}, Dual{q[1], {0.f, 1.f, 0.f}}, Dual{q[2], {0.f, 0.f, 1.f}});
    for (int i = 0; i < 3; ++i) {
      y.data<float>()[3 * p + i] = o[i].v;
      for (int j = 0; j < 3; ++j) jac[9 * p + 3 * i + j] = o[i].d[j];
    }
  }
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record(name, {x}, y, [jac = std::move(jac), shape = x.shape(), n](const Tensor& dy) {
      Tensor dx = Tensor::zeros(shape);
      for (int64_t p = 0; p < n; ++p)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) dx.data<float>()[3 * p + j] += dy.data<float>()[3 * p + i] * jac[9 * p + 3 * i + j];
      return ops::Grads{dx};
    });
  return y;
}
Tensor adjust_hue(const Args<Tensor>& a) {
  const Tensor x = a.value("image");
  if (x.rank() < 3 || x.dim(-1) != 3) a.fail("image", "of 3 channels, rank 3 or more (shape " + shape_str(x.shape()) + ")");
  const float delta = a.get<float>("delta", 0.f);
  if (!(delta >= -1.f && delta <= 1.f)) a.fail("delta", "in [-1, 1]");
  return per_pixel(x, "adjust_hue", [delta](Dual r, Dual g, Dual b) { return shift_hue(r, g, b, delta); });
}
Tensor adjust_saturation(const Args<Tensor>& a) {
  const Tensor x = a.value("image");
  if (x.rank() < 3 || x.dim(-1) != 3) a.fail("image", "of 3 channels, rank 3 or more (shape " + shape_str(x.shape()) + ")");
  const float k = a.get<float>("saturation_factor", 1.f);
  return per_pixel(x, "adjust_saturation", [k](Dual r, Dual g, Dual b) { return saturate(r, g, b, k); });
}

// ---- pad_images / crop_images (Keras 3) and pad_to_bounding_box / crop_to_bounding_box / central_crop.
struct Box {
  int64_t top, left, height, width;  // pad: the padded size; crop: the kept window
};
template <class T>
std::optional<int64_t> opt(const Args<T>& a, const char* name) {
  if (!a.has(name)) return std::nullopt;
  const int64_t v = a.template get<int64_t>(name, 0);
  if (v < 0) a.fail(name, "negative");
  return v;
}
template <class T>
int64_t two_of_three(const Args<T>& a, const char* first, const char* second, const char* target) {
  const int given = (a.has(first) ? 1 : 0) + (a.has(second) ? 1 : 0) + (a.has(target) ? 1 : 0);
  if (given != 2) a.fail(target, std::string("given with exactly one of '") + first + "' and '" + second + "' (two of the three)");
  return 0;
}
template <class T>
Box pad_box(const Args<T>& a, int64_t h, int64_t w) {
  two_of_three(a, "top_padding", "bottom_padding", "target_height");
  two_of_three(a, "left_padding", "right_padding", "target_width");
  auto top = opt(a, "top_padding"), bottom = opt(a, "bottom_padding"), th = opt(a, "target_height");
  auto left = opt(a, "left_padding"), right = opt(a, "right_padding"), tw = opt(a, "target_width");
  Box b{top ? *top : *th - *bottom - h, left ? *left : *tw - *right - w, 0, 0};
  b.height = th ? *th : b.top + h + *bottom;
  b.width = tw ? *tw : b.left + w + *right;
  if (b.top < 0 || b.height - h - b.top < 0) a.fail("target_height", "large enough for the image and its padding");
  if (b.left < 0 || b.width - w - b.left < 0) a.fail("target_width", "large enough for the image and its padding");
  return b;
}
template <class T>
Box crop_box(const Args<T>& a, int64_t h, int64_t w) {
  two_of_three(a, "top_cropping", "bottom_cropping", "target_height");
  two_of_three(a, "left_cropping", "right_cropping", "target_width");
  auto top = opt(a, "top_cropping"), bottom = opt(a, "bottom_cropping"), th = opt(a, "target_height");
  auto left = opt(a, "left_cropping"), right = opt(a, "right_cropping"), tw = opt(a, "target_width");
  Box b{top ? *top : h - *th - *bottom, left ? *left : w - *tw - *right, 0, 0};
  b.height = th ? *th : h - *bottom - b.top;
  b.width = tw ? *tw : w - *right - b.left;
  if (b.top < 0 || b.height < 0 || b.top + b.height > h) a.fail("target_height", "inside the image with its cropping");
  if (b.left < 0 || b.width < 0 || b.left + b.width > w) a.fail("target_width", "inside the image with its cropping");
  return b;
}
// tf.image's: offsets and target size given directly (channels last).
template <class T>
Box bounding_box(const Args<T>& a, int64_t h, int64_t w, bool pad) {
  Box b{a.template get<int64_t>("offset_height", 0), a.template get<int64_t>("offset_width", 0),
        a.template get<int64_t>("target_height", 0), a.template get<int64_t>("target_width", 0)};
  if (b.top < 0) a.fail("offset_height", "negative");
  if (b.left < 0) a.fail("offset_width", "negative");
  if (pad ? b.height < b.top + h : b.height <= 0 || b.top + b.height > h)
    a.fail("target_height", pad ? "at least offset_height + height" : "positive and inside the image");
  if (pad ? b.width < b.left + w : b.width <= 0 || b.left + b.width > w)
    a.fail("target_width", pad ? "at least offset_width + width" : "positive and inside the image");
  return b;
}
template <class T>
Box central_box(const Args<T>& a, int64_t h, int64_t w) {
  const double f = a.template get<double>("central_fraction", 1.0);
  if (!(f > 0.0 && f <= 1.0)) a.fail("central_fraction", "within (0, 1]");
  const int64_t top = static_cast<int64_t>((h - h * f) / 2), left = static_cast<int64_t>((w - w * f) / 2);
  return {top, left, h - 2 * top, w - 2 * left};
}
enum class BoxKind { pad_images, crop_images, pad_bbox, crop_bbox, central };
template <BoxKind K, class T>
Box box_of(const Args<T>& a, int64_t h, int64_t w) {
  if constexpr (K == BoxKind::pad_images) return pad_box(a, h, w);
  if constexpr (K == BoxKind::crop_images) return crop_box(a, h, w);
  if constexpr (K == BoxKind::pad_bbox) return bounding_box(a, h, w, true);
  if constexpr (K == BoxKind::crop_bbox) return bounding_box(a, h, w, false);
  return central_box(a, h, w);
}
constexpr bool keras_box(BoxKind k) { return k == BoxKind::pad_images || k == BoxKind::crop_images; }
template <BoxKind K>
Shape box_shape(const Args<Shape>& a) {
  Shape s = a.value(keras_box(K) ? "images" : "image");
  expect_images(s, a.who(), keras_box(K) ? "images" : "image");
  const int r = static_cast<int>(s.size());
  const bool cf = keras_box(K) && cf_of(a);
  const int ha = cf ? r - 2 : r - 3, wa = ha + 1;
  if (s[ha] < 0 || s[wa] < 0) a.fail(keras_box(K) ? "images" : "image", "of a known height and width");
  const Box b = box_of<K>(a, s[ha], s[wa]);
  s[ha] = b.height, s[wa] = b.width;
  return s;
}
template <BoxKind K>
Tensor boxed(const Args<Tensor>& a) {
  const Tensor x = a.value(keras_box(K) ? "images" : "image");
  const int r = x.rank();
  const bool cf = keras_box(K) && cf_of(a);
  const int ha = cf ? r - 2 : r - 3, wa = ha + 1;
  const int64_t h = x.dim(ha), w = x.dim(wa);
  const Box b = box_of<K>(a, h, w);
  if (K == BoxKind::pad_images || K == BoxKind::pad_bbox) {
    std::vector<std::pair<int64_t, int64_t>> pads(r, {0, 0});
    pads[ha] = {b.top, b.height - h - b.top};
    pads[wa] = {b.left, b.width - w - b.left};
    return ops::pad(x, pads);
  }
  std::vector<int64_t> begin(r, 0), size = x.shape();
  begin[ha] = b.top, begin[wa] = b.left, size[ha] = b.height, size[wa] = b.width;
  return ops::slice(x, begin, size);
}

// ---- gaussian_blur: a depthwise convolution, SAME padding, of Keras's (k0, k1) filter: the outer
// product of the column kernel (k1, sigma1) with the row kernel (k0, sigma0) read row-major as (k0, k1).
std::vector<float> gaussian_1d(int64_t size, float sigma) {
  std::vector<float> k(static_cast<size_t>(size));
  float sum = 0.f;
  for (int64_t i = 0; i < size; ++i) {
    const float x = (static_cast<float>(i) - (static_cast<float>(size) - 1.f) / 2.f) / sigma;
    sum += k[i] = std::exp(-0.5f * (x * x));
  }
  for (float& v : k) v /= sum;
  return k;
}
template <class T>
std::pair<std::array<int64_t, 2>, std::array<float, 2>> blur_args(const Args<T>& a) {
  auto pair = [&](const char* name, auto fallback) {
    using V = decltype(fallback);
    const Json& j = a.json(name);
    if (j.is_null()) return std::array<V, 2>{fallback, fallback};
    if (j.is_number()) return std::array<V, 2>{j.get<V>(), j.get<V>()};
    const std::vector<V> v = a.template get<std::vector<V>>(name, {});
    if (v.size() != 2) a.fail(name, "a pair");
    return std::array<V, 2>{v[0], v[1]};
  };
  const auto k = pair("kernel_size", int64_t{3});
  const auto s = pair("sigma", 1.f);
  if (k[0] < 1 || k[1] < 1) a.fail("kernel_size", "positive");
  if (!(s[0] > 0.f && s[1] > 0.f)) a.fail("sigma", "positive");
  return {k, s};
}
Shape blur_shape(const Args<Shape>& a) {
  const Shape s = a.value("images");
  expect_images(s, a.who(), "images");
  blur_args(a);
  return s;
}
Tensor blur(const Args<Tensor>& a) {
  const Tensor x = a.value("images");
  const bool cf = cf_of(a);
  const auto [k, sig] = blur_args(a);
  const std::vector<float> kx = gaussian_1d(k[0], sig[0]), ky = gaussian_1d(k[1], sig[1]);
  const Tensor xn = to_nhwc(x, cf);
  const int64_t c = xn.dim(3);
  std::vector<float> f(static_cast<size_t>(k[0] * k[1] * c));
  for (int64_t p = 0; p < k[0] * k[1]; ++p)
    for (int64_t ch = 0; ch < c; ++ch) f[p * c + ch] = ky[p / k[0]] * kx[p % k[0]];
  ops::ConvOptions o{{1, 1}, {1, 1}, ops::Padding::same, false, c, {}};
  return from_nhwc(ops::conv(xn, Tensor::from_vector({k[0], k[1], 1, c}, f), Tensor(), o), x.rank(), cf);
}

// ---- ssim (keras/src/ops/image.py _ssim): gaussian means by VALID convolutions per channel.
Shape ssim_shape(const Args<Shape>& a) {
  const Shape s1 = a.value("image1"), s2 = a.value("image2");
  expect_images(s1, a.who(), "image1");
  expect_images(s2, a.who(), "image2");
  if (s1 != s2) a.fail("image2", "of image1's shape " + shape_str(s1));
  return s1.size() == 3 ? Shape{} : Shape{s1[0]};
}
Tensor ssim(const Args<Tensor>& a) {
  const Tensor i1 = a.value("image1"), i2 = a.value("image2");
  if (i1.shape() != i2.shape()) a.fail("image2", "of image1's shape " + shape_str(i1.shape()));
  const bool cf = cf_of(a);
  const int64_t fs = a.get<int64_t>("filter_size", 11);
  const float sigma = a.get<float>("filter_sigma", 1.5f), max_val = a.get<float>("max_val", 1.f);
  const float c1 = std::pow(a.get<float>("k1", 0.01f) * max_val, 2.f), c2 = std::pow(a.get<float>("k2", 0.03f) * max_val, 2.f);
  const Tensor x1 = to_nhwc(i1, cf), x2 = to_nhwc(i2, cf);
  const int64_t b = x1.dim(0), h = x1.dim(1), w = x1.dim(2), c = x1.dim(3);
  if (fs < 1 || fs > h || fs > w) a.fail("filter_size", "between 1 and the images' height and width");
  std::vector<float> g(static_cast<size_t>(fs));
  float total = 0.f;
  for (int64_t i = 0; i < fs; ++i) {
    const float x = static_cast<float>(i) - (static_cast<float>(fs) - 1.f) / 2.f;
    total += g[i] = std::exp(-(x * x) / (2.f * sigma * sigma));
  }
  std::vector<float> kernel(static_cast<size_t>(fs * fs));
  for (int64_t i = 0; i < fs * fs; ++i) kernel[i] = (g[i / fs] / total) * (g[i % fs] / total);
  const Tensor k = Tensor::from_vector({fs, fs, 1, 1}, kernel);
  const ops::ConvOptions o{{1, 1}, {1, 1}, ops::Padding::valid, false, 1, {}};
  auto planes = [&](const Tensor& x) { return ops::transpose(x, {0, 3, 1, 2}).reshape({b * c, h, w, 1}); };
  auto mean = [&](const Tensor& x) { return ops::conv(x, k, Tensor(), o); };
  const Tensor p1 = planes(x1), p2 = planes(x2);
  const Tensor mu1 = mean(p1), mu2 = mean(p2);
  const Tensor mu1_sq = mul(mu1, mu1), mu2_sq = mul(mu2, mu2), mu12 = mul(mu1, mu2);
  const Tensor s1 = sub(mean(mul(p1, p1)), mu1_sq), s2 = sub(mean(mul(p2, p2)), mu2_sq), s12 = sub(mean(mul(p1, p2)), mu12);
  const Tensor num = mul(ops::scale_shift(mu12, 2.f, c1), ops::scale_shift(s12, 2.f, c2));
  const Tensor den = mul(ops::scale_shift(add(mu1_sq, mu2_sq), 1.f, c1), ops::scale_shift(add(s1, s2), 1.f, c2));
  const Tensor per_plane = ops::reduce_mean(div(num, den), {1, 2, 3});
  const Tensor out = ops::reduce_mean(per_plane.reshape({b, c}), {1});
  return i1.rank() == 3 ? out.reshape({}) : out;
}

// ---- extract_patches (2-D and 3-D): Keras convolves with an identity kernel, each output channel
// one (patch position, channel); tf.image.extract_patches orders them alike.
struct PatchSpec {
  std::vector<int64_t> size, strides, dilation;
  ops::Padding padding;
};
template <class T>
PatchSpec patch_spec(const Args<T>& a) {
  PatchSpec p;
  auto list = [&](const char* name, const std::vector<int64_t>& fallback, size_t n) {
    const Json& j = a.json(name);
    if (j.is_null()) return fallback;
    if (j.is_number_integer()) return std::vector<int64_t>(n, j.get<int64_t>());
    std::vector<int64_t> v = a.template get<std::vector<int64_t>>(name, {});
    if (!a.keras3()) {  // tf: [1, h, w, 1]
      if (v.size() != 4 || v[0] != 1 || v[3] != 1) a.fail(name, "a list [1, rows, cols, 1]");
      v = {v[1], v[2]};
    }
    if (v.size() != n) a.fail(name, "one value per spatial dim");
    for (int64_t e : v)
      if (e < 1) a.fail(name, "positive");
    return v;
  };
  const char* size_name = a.keras3() ? "size" : "sizes";
  const Json& sj = a.json(size_name);
  const size_t n = a.keras3() ? (sj.is_array() ? sj.size() : 2) : 2;
  if (n != 2 && n != 3) a.fail(size_name, "an int or 2 or 3 sizes");
  p.size = list(size_name, {}, n);
  if (p.size.empty()) a.fail(size_name, "given");
  p.strides = list("strides", p.size, n);
  if (p.strides.empty()) p.strides = p.size;
  p.dilation = list(a.keras3() ? "dilation_rate" : "rates", std::vector<int64_t>(n, 1), n);
  p.padding = ops::padding_from_name(a.template get<std::string>("padding", "valid"), a.who());
  if (p.padding == ops::Padding::causal) a.fail("padding", "'valid' or 'same'");
  return p;
}
Shape patches_shape(const Args<Shape>& a) {
  Shape s = a.value("images");
  const PatchSpec p = patch_spec(a);
  const size_t n = p.size.size();
  const bool cf = a.keras3() && cf_of(a);
  if (s.size() != n + 1 && s.size() != n + 2) a.fail("images", "of rank " + std::to_string(n + 1) + " or " + std::to_string(n + 2));
  const size_t first = s.size() - n - (cf ? 0 : 1), c_axis = cf ? s.size() - n - 1 : s.size() - 1;
  int64_t area = 1;
  for (size_t d = 0; d < n; ++d) {
    area *= p.size[d];
    if (s[first + d] >= 0) s[first + d] = ops::conv_output_length(s[first + d], p.size[d], p.strides[d], p.dilation[d], p.padding);
  }
  s[c_axis] = s[c_axis] < 0 ? -1 : s[c_axis] * area;
  return s;
}
Tensor patches(const Args<Tensor>& a) {
  Tensor x = a.value("images");
  const PatchSpec p = patch_spec(a);
  const int n = static_cast<int>(p.size.size());
  const bool cf = a.keras3() && cf_of(a);
  if (x.rank() != n + 1 && x.rank() != n + 2) a.fail("images", "of rank " + std::to_string(n + 1) + " or " + std::to_string(n + 2));
  const bool unbatched = x.rank() == n + 1;
  if (unbatched) {
    Shape s = x.shape();
    s.insert(s.begin(), 1);
    x = x.reshape(s);
  }
  const int64_t c = x.dim(cf ? 1 : -1);
  int64_t area = 1;
  for (int64_t k : p.size) area *= k;
  const int64_t out = area * c;
  std::vector<float> eye(static_cast<size_t>(out * out), 0.f);
  for (int64_t i = 0; i < out; ++i) eye[i * out + i] = 1.f;
  Shape ks(p.size.begin(), p.size.end());
  ks.push_back(c), ks.push_back(out);
  const ops::ConvOptions o{p.strides, p.dilation, p.padding, cf, 1, {}};
  Tensor y = ops::conv(x, Tensor::from_vector(ks, eye), Tensor(), o);
  if (unbatched) {
    Shape s = y.shape();
    s.erase(s.begin());
    y = y.reshape(s);
  }
  return y;
}

// ---- sobel_edges (Keras 3; tf.image.sobel_edges): 3x3 Sobel filters on the image padded by reflection,
// (batch, h, w, c) -> (batch, h, w, c, 2), [..., 0] the vertical gradient dy, [..., 1] dx.
Shape sobel_shape(const Args<Shape>& a) {
  Shape s = a.value("images");
  if (s.size() != 4) a.fail("images", "of rank 4 (a batch of images)");
  cf_of(a);
  s.push_back(2);
  return s;
}
Tensor reflect_pad1(const Tensor& x, int axis) {  // one row each side: x[1], x, x[n - 2]
  const int64_t n = x.dim(axis);
  std::vector<int64_t> begin(x.rank(), 0), size = x.shape();
  size[axis] = 1;
  begin[axis] = 1;
  const Tensor first = ops::slice(x, begin, size);
  begin[axis] = n - 2;
  const Tensor last = ops::slice(x, begin, size);
  return ops::concatenate({first, x, last}, axis);
}
Tensor sobel(const Args<Tensor>& a) {
  const Tensor images = a.value("images");
  if (images.rank() != 4) a.fail("images", "of rank 4 (a batch of images)");
  const bool cf = cf_of(a);
  const Tensor x = to_nhwc(images, cf);
  const int64_t b = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  if (h < 2 || w < 2) a.fail("images", "at least 2 x 2 (reflection padding)");
  const float ky[9] = {-1, -2, -1, 0, 0, 0, 1, 2, 1}, kx[9] = {-1, 0, 1, -2, 0, 2, -1, 0, 1};
  std::vector<float> k(static_cast<size_t>(9 * c * 2));
  for (int p = 0; p < 9; ++p)
    for (int64_t ch = 0; ch < c; ++ch) k[(p * c + ch) * 2] = ky[p], k[(p * c + ch) * 2 + 1] = kx[p];
  const ops::ConvOptions o{{1, 1}, {1, 1}, ops::Padding::valid, false, c, {}};
  Tensor y = ops::conv(reflect_pad1(reflect_pad1(x, 1), 2), Tensor::from_vector({3, 3, 1, 2 * c}, k), Tensor(), o)
                 .reshape({b, h, w, c, 2});
  return cf ? ops::transpose(y, {0, 3, 1, 2, 4}) : y;
}

// ---- tf.image adjustments (channels last).
Tensor adjust_brightness(const Args<Tensor>& a) {
  return add(a.value("image"), a.value("delta"));
}
// (x - mean) * f + mean, the mean per channel over height and width.
Tensor adjust_contrast(const Args<Tensor>& a) {
  const Tensor x = a.value("images");
  if (x.rank() < 3) a.fail("images", "of rank 3 or more");
  const Tensor m = ops::reduce_mean(x, {-3, -2}, true);
  return add(mul(sub(x, m), a.value("contrast_factor")), m);
}
// gain * x ** gamma.
Tensor adjust_gamma(const Args<Tensor>& a) {
  const Tensor x = a.value("image");
  const float gamma = a.get<float>("gamma", 1.f), gain = a.get<float>("gain", 1.f);
  if (gamma < 0.f) a.fail("gamma", "non-negative");
  Tensor p = gamma == 1.f ? x : ops::unary(ops::UnaryOp::exp, ops::scale_shift(ops::unary(ops::UnaryOp::log, x), gamma, 0.f));
  return gain == 1.f ? p : ops::scale_shift(p, gain, 0.f);
}
// (x - mean) / max(std, 1 / sqrt(pixels)) over each image's last three axes.
Tensor per_image_standardization(const Args<Tensor>& a) {
  const Tensor x = a.value("image");
  if (x.rank() < 3) a.fail("image", "of rank 3 or more");
  const int64_t n = x.dim(-1) * x.dim(-2) * x.dim(-3);
  const Tensor centred = sub(x, ops::reduce_mean(x, {-3, -2, -1}, true));
  const Tensor sd = ops::unary(ops::UnaryOp::sqrt, ops::reduce_mean(mul(centred, centred), {-3, -2, -1}, true));
  return div(centred, ops::binary(ops::BinaryOp::maximum, sd, scalar(1.f / std::sqrt(static_cast<float>(n)))));
}
Shape rank3_same(const Args<Shape>& a) {
  const Shape s = a.value(a.has("images") ? "images" : "image");
  expect_rank(a, s, 3, a.has("images") ? "images" : "image");
  return s;
}
Shape image_same(const Args<Shape>& a) { return a.value("image"); }

}  // namespace

std::vector<OpDef> image_ops() {
  std::vector<OpDef> defs = {
      OpDef{"ops.image.RGBToGrayscale", "image.rgb_to_grayscale", {"images", "data_format"}, {}, grayscale_shape, grayscale},
      OpDef{"ops.image.RGBToHSV", "image.rgb_to_hsv", {"images", "data_format"}, {}, hsv_shape, hsv<true>},
      OpDef{"ops.image.HSVToRGB", "image.hsv_to_rgb", {"images", "data_format"}, {}, hsv_shape, hsv<false>},
      OpDef{nullptr, "image.grayscale_to_rgb", {"images"}, {}, gray_to_rgb_shape, gray_to_rgb},
      OpDef{"ops.image.PadImages",
            nullptr,
            {"images", "top_padding", "left_padding", "bottom_padding", "right_padding", "target_height", "target_width",
             "data_format"},
            {},
            box_shape<BoxKind::pad_images>,
            boxed<BoxKind::pad_images>},
      OpDef{"ops.image.CropImages",
            nullptr,
            {"images", "top_cropping", "left_cropping", "bottom_cropping", "right_cropping", "target_height", "target_width",
             "data_format"},
            {},
            box_shape<BoxKind::crop_images>,
            boxed<BoxKind::crop_images>},
      OpDef{nullptr, "image.pad_to_bounding_box", {"image", "offset_height", "offset_width", "target_height", "target_width"},
            {}, box_shape<BoxKind::pad_bbox>, boxed<BoxKind::pad_bbox>},
      OpDef{nullptr, "image.crop_to_bounding_box", {"image", "offset_height", "offset_width", "target_height", "target_width"},
            {}, box_shape<BoxKind::crop_bbox>, boxed<BoxKind::crop_bbox>},
      OpDef{nullptr, "image.central_crop", {"image", "central_fraction"}, {}, box_shape<BoxKind::central>,
            boxed<BoxKind::central>},
      OpDef{"ops.image.GaussianBlur", nullptr, {"images", "kernel_size", "sigma", "data_format"}, {}, blur_shape, blur},
      OpDef{"ops.image.SSIM",
            nullptr,
            {"image1", "image2", "max_val", "filter_size", "filter_sigma", "k1", "k2", "data_format"},
            {},
            ssim_shape,
            ssim},
      OpDef{"ops.image.ExtractPatches", nullptr, {"images", "size", "strides", "dilation_rate", "padding", "data_format"}, {},
            patches_shape, patches},
      OpDef{nullptr, "image.extract_patches|image.extract_image_patches", {"images", "sizes", "strides", "rates", "padding"},
            {{"ksizes", "sizes"}}, patches_shape, patches},
      OpDef{"ops.image.SobelEdges", nullptr, {"images", "data_format"}, {}, sobel_shape, sobel},
      OpDef{nullptr, "image.adjust_brightness", {"image", "delta"}, {}, image_same, adjust_brightness},
      OpDef{nullptr, "image.adjust_contrast", {"images", "contrast_factor"}, {}, rank3_same, adjust_contrast},
      OpDef{nullptr, "image.adjust_saturation", {"image", "saturation_factor"}, {}, image_same, adjust_saturation},
      OpDef{nullptr, "image.adjust_hue", {"image", "delta"}, {}, image_same, adjust_hue},
      OpDef{nullptr, "image.adjust_gamma", {"image", "gamma", "gain"}, {}, image_same, adjust_gamma},
      OpDef{nullptr, "image.per_image_standardization", {"image"}, {}, rank3_same, per_image_standardization},
  };
  for (OpDef& d : image_sampling_ops()) defs.push_back(std::move(d));
  return defs;
}

}  // namespace kerascpp::layers::op_nodes
