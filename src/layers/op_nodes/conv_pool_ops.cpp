// Convolution and pooling op nodes: keras.ops conv / depthwise_conv / separable_conv / conv_transpose /
// max_pool / average_pool (the kernel a constant array or a tensor of the graph, with its gradient),
// and tf.nn's conv1d / conv2d / conv3d / convolution / depthwise_conv2d / separable_conv2d /
// conv*_transpose (output_shape given) / max_pool* / avg_pool* / pool as tf_keras records them (some
// under compat.v1 names, with v1's argument names). Forward and gradients are ops::conv,
// ops::conv_transpose and ops::pool's. Adaptive pooling, unfold and fold: conv_pool_ops_extra.cpp.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "layers/op_nodes/op_node.h"

namespace kerascpp::layers::op_nodes {

std::vector<OpDef> conv_pool_extra_ops();  // conv_pool_ops_extra.cpp

namespace {

inline const Shape& shape_of(const Shape& s) { return s; }
inline const Shape& shape_of(const Tensor& t) { return t.shape(); }

// "valid" / "same" in any case; explicit paddings (tf.nn.conv2d's lists) and "causal" are refused.
template <class T>
ops::Padding padding_of(const Args<T>& a, const char* fallback) {
  const Json& j = a.json("padding");
  if (!j.is_null() && !j.is_string()) a.fail("padding", "supported by kerascpp (only \"valid\" or \"same\", no explicit paddings)");
  std::string s = j.is_null() ? fallback : j.get<std::string>();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "valid") return ops::Padding::valid;
  if (s == "same") return ops::Padding::same;
  a.fail("padding", "\"valid\" or \"same\"");
}

// A per-spatial-dim option: an int, or a list of 1 or n ints; tf.nn's lists of n + 2 with 1 for the
// batch and channels dims too. null: `fallback` (if none, `or_else`'s values). Each >= `least`.
template <class T>
std::vector<int64_t> per_dim(const Args<T>& a, const char* name, size_t n, bool cf, int64_t fallback,
                             const std::vector<int64_t>* or_else = nullptr, int64_t least = 1) {
  const Json& j = a.json(name);
  if (j.is_null()) return or_else ? *or_else : std::vector<int64_t>(n, fallback);
  std::vector<int64_t> v;
  if (j.is_number_integer()) {
    v.assign(n, j.get<int64_t>());
  } else if (j.is_array()) {
    for (const Json& e : j) {
      if (!e.is_number_integer()) a.fail(name, "an int or a list of ints");
      v.push_back(e.get<int64_t>());
    }
    if (v.size() == 1) v.assign(n, v[0]);
    if (!a.keras3() && v.size() == n + 2) {
      const size_t channel = cf ? 1 : n + 1;
      if (v[0] != 1 || v[channel] != 1) a.fail(name, "1 along the batch and channels dims");
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(channel));
      v.erase(v.begin());
    }
    if (v.size() != n) a.fail(name, "an int or a list of " + std::to_string(n) + " ints (one per spatial dim)");
  } else {
    a.fail(name, "an int or a list of ints");
  }
  for (int64_t e : v)
    if (e < least) a.fail(name, least == 0 ? "non-negative" : "positive");
  return v;
}

// x's rank against the kernel's: (batch, *n spatial, channels) with n in 1..3.
template <class T>
size_t spatial_dims(const Args<T>& a, const Shape& x, const Shape& kernel, const char* kernel_name) {
  KCPP_CHECK(kernel.size() >= 3 && kernel.size() <= 5, ValueError, a.who(), ": argument '", kernel_name,
             "' must have rank 3, 4 or 5 (1 to 3 spatial dims, then 2 channel dims). Received: shape=", shape_str(kernel));
  KCPP_CHECK(x.size() == kernel.size(), ValueError, a.who(), ": the input must have the kernel's rank ", kernel.size(),
             " (batch, spatial dims, channels). Received: input shape=", shape_str(x), ", ", kernel_name, " shape=",
             shape_str(kernel));
  return kernel.size() - 2;
}

int64_t channels(const Shape& x, bool cf) { return cf ? x[1] : x.back(); }

// x's shape with its spatial dims and channels replaced.
Shape with_spatial(const Shape& x, const std::vector<int64_t>& spatial, int64_t ch, bool cf) {
  Shape s = {x[0]};
  if (cf) s.push_back(ch);
  s.insert(s.end(), spatial.begin(), spatial.end());
  if (!cf) s.push_back(ch);
  return s;
}

// The output's spatial dims of a convolution (pooling: dilation 1), each checked positive.
template <class T>
std::vector<int64_t> conv_spatial(const Args<T>& a, const Shape& x, const std::vector<int64_t>& k, const ops::ConvOptions& o) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < k.size(); ++d) {
    const int64_t in = x[d + (o.channels_first ? 2 : 1)];
    const int64_t dil = o.dilation_rate.empty() ? 1 : o.dilation_rate[d];
    const int64_t len = in < 0 ? -1 : ops::conv_output_length(in, k[d], o.strides[d], dil, o.padding);
    KCPP_CHECK(in < 0 || len > 0, ValueError, a.who(), ": the output would be empty: spatial dim ", d, " of size ", in,
               " is smaller than the window ", (k[d] - 1) * dil + 1, ". Received: input shape=", shape_str(x));
    out.push_back(len);
  }
  return out;
}

// ---- convolutions
enum class Kind { conv, depthwise, separable, transpose };

struct Setup {
  ops::ConvOptions o;
  Shape out;
  std::vector<int64_t> output_padding;  // transposed, from tf's output_shape
};

template <class T>
Setup conv_setup(const Args<T>& a, Kind kind, const char* pad_default) {
  const char* kname = kind == Kind::separable ? "depthwise_kernel" : "kernel";
  const Shape x = shape_of(a.value("inputs")), k = shape_of(a.value(kname));
  const size_t n = spatial_dims(a, x, k, kname);
  Setup s;
  s.o.channels_first = channels_first(a);
  s.o.padding = padding_of(a, pad_default);
  s.o.strides = per_dim(a, "strides", n, s.o.channels_first, 1);
  s.o.dilation_rate = per_dim(a, "dilation_rate", n, s.o.channels_first, 1);
  const int64_t in = channels(x, s.o.channels_first);
  const std::vector<int64_t> ksize(k.begin(), k.end() - 2);
  auto bad_kernel = [&](const char* name, const std::string& expected) {
    KCPP_THROW(ValueError, a.who(), ": argument '", name, "' must have the shape ", expected, ". Received: ", name,
               ".shape=", shape_str(shape_of(a.value(name))), ", input shape=", shape_str(x));
  };
  if (kind == Kind::transpose) {
    if (k[n + 1] != in) bad_kernel(kname, "(*kernel_size, filters, " + std::to_string(in) + ")");
    const int64_t filters = k[n];
    std::vector<int64_t> spatial;
    if (a.given("output_shape")) {  // tf.nn.conv*_transpose: the output's shape, checked
      const Json& j = a.json("output_shape");
      if (!j.is_array() || j.size() != n + 2) a.fail("output_shape", "a list of " + std::to_string(n + 2) + " dims (a tensor is not supported by kerascpp)");
      Shape want;
      for (size_t i = 0; i < j.size(); ++i) {
        if (!j[i].is_number_integer() && i > 0) a.fail("output_shape", "a list of constant dims after the batch dim");
        want.push_back(j[i].is_number_integer() ? j[i].get<int64_t>() : -1);
      }
      if (channels(want, s.o.channels_first) != filters) a.fail("output_shape", "giving the kernel's " + std::to_string(filters) + " filters");
      for (size_t d = 0; d < n; ++d) {
        const int64_t out = want[d + (s.o.channels_first ? 2 : 1)], xin = x[d + (s.o.channels_first ? 2 : 1)];
        const int64_t dk = (ksize[d] - 1) * s.o.dilation_rate[d] + 1;
        if (out < 1 || (xin >= 0 && ops::conv_output_length(out, ksize[d], s.o.strides[d], s.o.dilation_rate[d], s.o.padding) != xin))
          a.fail("output_shape", "a shape whose convolution has the input's shape " + shape_str(x));
        // The primitive's output length with this output_padding is `out`.
        const int64_t base = s.o.padding == ops::Padding::same ? dk % 2 : dk;
        s.output_padding.push_back(xin < 0 ? 0 : out - ((xin - 1) * s.o.strides[d] + base));
        spatial.push_back(out);
      }
      s.o.output_padding = s.output_padding;
    } else {
      if (a.has("output_padding")) {
        s.o.output_padding = per_dim(a, "output_padding", n, s.o.channels_first, 0, nullptr, 0);
        for (size_t d = 0; d < n; ++d)
          if (s.o.output_padding[d] >= std::max(s.o.strides[d], s.o.dilation_rate[d]))
            a.fail("output_padding", "smaller than the strides (or the dilation rate)");
      }
      for (size_t d = 0; d < n; ++d) {
        const int64_t xin = x[d + (s.o.channels_first ? 2 : 1)];
        const int64_t op = s.o.output_padding.empty() ? -1 : s.o.output_padding[d];
        const int64_t len = xin < 0 ? -1 : ops::conv_transpose_output_length(xin, ksize[d], s.o.strides[d], s.o.dilation_rate[d], s.o.padding, op);
        KCPP_CHECK(xin < 0 || len > 0, ValueError, a.who(), ": the output would be empty. Received: input shape=", shape_str(x));
        spatial.push_back(len);
      }
    }
    s.out = with_spatial(x, spatial, filters, s.o.channels_first);
    return s;
  }
  int64_t out_ch = k[n + 1];
  // A kernel the graph computes may have unknown dims (tf.image.sobel_edges tiles its kernel by
  // tf.shape(image)[-1]): checked when the model runs.
  if (kind == Kind::conv) {
    // Keras checks that the kernel's input channels are the input's (no groups).
    if (k[n] != in && k[n] >= 0) bad_kernel(kname, "(*kernel_size, " + std::to_string(in) + ", filters)");
  } else {
    if (k[n] != in && k[n] >= 0) bad_kernel(kname, "(*kernel_size, " + std::to_string(in) + ", channel_multiplier)");
    s.o.groups = in;
    out_ch = in * k[n + 1];
  }
  if (kind == Kind::separable) {
    const Shape p = shape_of(a.value("pointwise_kernel"));
    bool ok = p.size() == n + 2 && p[n] == out_ch;
    for (size_t d = 0; d < n && ok; ++d) ok = p[d] == 1;
    if (!ok) bad_kernel("pointwise_kernel", "(" + std::string(n == 1 ? "1" : n == 2 ? "1, 1" : "1, 1, 1") + ", " + std::to_string(out_ch) + ", filters)");
    out_ch = p[n + 1];
  }
  s.out = with_spatial(x, conv_spatial(a, x, ksize, s.o), out_ch, s.o.channels_first);
  return s;
}

template <Kind kind, const char* const* pad_default>
Shape conv_shape(const Args<Shape>& a) {
  return conv_setup(a, kind, *pad_default).out;
}

template <Kind kind, const char* const* pad_default>
Tensor conv_call(const Args<Tensor>& a) {
  const Setup s = conv_setup(a, kind, *pad_default);
  const Tensor x = a.value("inputs");
  Tensor y;
  if (kind == Kind::transpose) {
    y = ops::conv_transpose(x, a.value("kernel"), Tensor(), s.o);
  } else if (kind == Kind::conv) {
    y = ops::conv(x, a.value("kernel"), Tensor(), s.o);
  } else {
    const Tensor k = a.value(kind == Kind::separable ? "depthwise_kernel" : "kernel");
    Shape grouped(k.shape().begin(), k.shape().end() - 2);
    grouped.push_back(1);
    grouped.push_back(k.dim(-2) * k.dim(-1));
    y = ops::conv(x, k.reshape(grouped), Tensor(), s.o);
    if (kind == Kind::separable) {
      ops::ConvOptions p;
      p.strides.assign(s.o.strides.size(), 1);
      p.dilation_rate.assign(s.o.strides.size(), 1);
      p.channels_first = s.o.channels_first;
      y = ops::conv(y, a.value("pointwise_kernel"), Tensor(), p);
    }
  }
  KCPP_CHECK(y.shape() == s.out, InternalError, a.who(), ": computed shape ", shape_str(y.shape()), " is not the inferred ",
             shape_str(s.out));
  return y;
}

// ---- pooling
template <class T>
ops::PoolMode pool_mode(const Args<T>& a, ops::PoolMode fallback) {
  if (!a.given("pooling_type")) return fallback;
  const std::string t = a.template get<std::string>("pooling_type", "");
  if (t == "MAX") return ops::PoolMode::max;
  if (t == "AVG") return ops::PoolMode::average;
  a.fail("pooling_type", "\"MAX\" or \"AVG\"");
}

template <class T>
Setup pool_setup(const Args<T>& a) {
  const Shape x = shape_of(a.value("inputs"));
  KCPP_CHECK(x.size() >= 3 && x.size() <= 5, ValueError, a.who(), ": the input must have rank 3, 4 or 5 (batch, 1 to 3 "
             "spatial dims, channels). Received: shape=", shape_str(x));
  const size_t n = x.size() - 2;
  Setup s;
  s.o.channels_first = channels_first(a);
  s.o.padding = padding_of(a, "valid");
  const std::vector<int64_t> k = per_dim(a, "pool_size", n, s.o.channels_first, 1);
  if (!a.has("pool_size")) a.fail("pool_size", "given");
  // Keras's strides default to the window; tf.nn.pool's to 1 (max_pool / avg_pool require them).
  s.o.strides = per_dim(a, "strides", n, s.o.channels_first, 1, a.keras3() ? &k : nullptr);
  for (int64_t d : per_dim(a, "dilation_rate", n, s.o.channels_first, 1))
    if (d != 1) a.fail("dilation_rate", "1 (kerascpp pools without dilation)");
  s.o.dilation_rate = k;  // the window, for the call
  s.out = with_spatial(x, conv_spatial(a, x, k, ops::ConvOptions{s.o.strides, {}, s.o.padding, s.o.channels_first, 1, {}}),
                       channels(x, s.o.channels_first), s.o.channels_first);
  return s;
}

template <ops::PoolMode mode>
Shape pool_shape(const Args<Shape>& a) {
  pool_mode(a, mode);
  return pool_setup(a).out;
}
template <ops::PoolMode mode>
Tensor pool_call(const Args<Tensor>& a) {
  const Setup s = pool_setup(a);
  return ops::pool(a.value("inputs"), pool_mode(a, mode), s.o.dilation_rate, s.o.strides, s.o.padding, s.o.channels_first);
}

constexpr const char* kValid = "valid";
constexpr const char* kSame = "same";
using Names = std::vector<std::pair<std::string, std::string>>;
// tf.nn's names of the parameters (v1's too) onto the Keras 3 ones.
const Names kTfConv = {{"input", "inputs"},      {"value", "inputs"},        {"filters", "kernel"},
                       {"filter", "kernel"},     {"dilations", "dilation_rate"}, {"rate", "dilation_rate"},
                       {"stride", "strides"},    {"depthwise_filter", "depthwise_kernel"},
                       {"pointwise_filter", "pointwise_kernel"}};
const Names kTfPool = {{"input", "inputs"}, {"value", "inputs"}, {"ksize", "pool_size"}, {"window_shape", "pool_size"},
                       {"dilations", "dilation_rate"}};

#define CONV(kind, pad) conv_shape<Kind::kind, &pad>, conv_call<Kind::kind, &pad>
#define POOL(mode) pool_shape<ops::PoolMode::mode>, pool_call<ops::PoolMode::mode>

}  // namespace

std::vector<OpDef> conv_pool_ops() {
  using P = std::vector<std::string>;
  const P keras_conv = {"inputs", "kernel", "strides", "padding", "data_format", "dilation_rate"};
  const P keras_pool = {"inputs", "pool_size", "strides", "padding", "data_format"};
  const P tf_conv = {"inputs", "kernel", "strides", "padding", "data_format", "dilation_rate"};
  const P tf_v1_conv = {"inputs", "kernel", "strides", "padding", "use_cudnn_on_gpu", "data_format", "dilation_rate"};
  const P tf_transpose = {"inputs", "kernel", "output_shape", "strides", "padding", "data_format", "dilation_rate"};
  std::vector<OpDef> defs = {
      OpDef{"ops.nn.Conv", nullptr, keras_conv, {}, CONV(conv, kValid)},
      OpDef{"ops.nn.DepthwiseConv", nullptr, keras_conv, {}, CONV(depthwise, kValid)},
      OpDef{"ops.nn.SeparableConv", nullptr,
            {"inputs", "depthwise_kernel", "pointwise_kernel", "strides", "padding", "data_format", "dilation_rate"}, {},
            CONV(separable, kValid)},
      OpDef{"ops.nn.ConvTranspose", nullptr,
            {"inputs", "kernel", "strides", "padding", "output_padding", "data_format", "dilation_rate"}, {},
            CONV(transpose, kValid)},
      OpDef{"ops.nn.MaxPool", nullptr, keras_pool, {}, POOL(max)},
      OpDef{"ops.nn.AveragePool", nullptr, keras_pool, {}, POOL(average)},
      // tf.nn.conv1d(input, filters, stride, padding, data_format, dilations); conv2d / conv3d /
      // convolution alike (convolution's strides and padding have defaults).
      OpDef{nullptr, "nn.conv1d|nn.conv2d|nn.conv3d|nn.convolution", tf_conv, kTfConv, CONV(conv, kValid)},
      // v1: conv1d(value, filters, stride, padding, use_cudnn_on_gpu, data_format, name, input, dilations)
      OpDef{nullptr, "compat.v1.nn.conv1d|compat.v1.nn.conv2d", tf_v1_conv, kTfConv, CONV(conv, kValid)},
      // v1: conv3d(input, filter, strides, padding, data_format, dilations)
      OpDef{nullptr, "compat.v1.nn.conv3d", tf_conv, kTfConv, CONV(conv, kValid)},
      // v1: convolution(input, filter, padding, strides, dilation_rate, name, data_format, filters, dilations)
      OpDef{nullptr, "compat.v1.nn.convolution", {"inputs", "kernel", "padding", "strides", "dilation_rate", "name", "data_format"},
            kTfConv, CONV(conv, kValid)},
      OpDef{nullptr, "nn.depthwise_conv2d", {"inputs", "kernel", "strides", "padding", "data_format", "dilation_rate"}, kTfConv,
            CONV(depthwise, kValid)},
      OpDef{nullptr, "compat.v1.nn.depthwise_conv2d", {"inputs", "kernel", "strides", "padding", "dilation_rate", "name", "data_format"},
            kTfConv, CONV(depthwise, kValid)},
      OpDef{nullptr, "nn.separable_conv2d",
            {"inputs", "depthwise_kernel", "pointwise_kernel", "strides", "padding", "data_format", "dilation_rate"}, kTfConv,
            CONV(separable, kValid)},
      OpDef{nullptr, "compat.v1.nn.separable_conv2d",
            {"inputs", "depthwise_kernel", "pointwise_kernel", "strides", "padding", "dilation_rate", "name", "data_format"},
            kTfConv, CONV(separable, kValid)},
      OpDef{nullptr, "nn.conv1d_transpose|nn.conv2d_transpose|nn.conv3d_transpose|nn.conv_transpose", tf_transpose, kTfConv,
            CONV(transpose, kSame)},
      // tf.nn.max_pool(input, ksize, strides, padding, data_format); the *1d / 2d / 3d alike.
      OpDef{nullptr, "nn.max_pool|nn.max_pool1d|nn.max_pool2d|nn.max_pool3d|compat.v1.nn.max_pool", keras_pool, kTfPool, POOL(max)},
      OpDef{nullptr, "nn.avg_pool|nn.avg_pool1d|nn.avg_pool2d|nn.avg_pool3d|compat.v1.nn.avg_pool", keras_pool, kTfPool,
            POOL(average)},
      OpDef{nullptr, "nn.pool", {"inputs", "pool_size", "pooling_type", "strides", "padding", "data_format", "dilation_rate"},
            kTfPool, POOL(max)},
      // v1: pool(input, window_shape, pooling_type, padding, dilation_rate, strides, name, data_format, dilations)
      OpDef{nullptr, "compat.v1.nn.pool", {"inputs", "pool_size", "pooling_type", "padding", "dilation_rate", "strides", "name", "data_format"},
            kTfPool, POOL(max)},
  };
  for (OpDef& d : conv_pool_extra_ops()) defs.push_back(std::move(d));
  return defs;
}

}  // namespace kerascpp::layers::op_nodes
