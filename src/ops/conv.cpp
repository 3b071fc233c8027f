// Convolution, transposed convolution and pooling: shape inference in Keras's terms, then a oneDNN
// plan from the calling layer's PlanCache, or the reference kernel where oneDNN refuses.
#include <algorithm>
#include <cctype>
#include <memory>
#include <string>

#include "kerascpp/threading.h"
#include "kernels/conv.h"
#include "kernels/dispatch_log.h"
#include "kernels/ref/ref.h"
#include "ops/checks.h"
#include "ops/conv_geometry.h"
#include "ops/ops.h"
#include "ops/plan_cache.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

// Spatial sizes of x as (d, h, w) with leading 1s; channels from the layout.
struct Spatial {
  int rank = 0;
  int64_t n = 0, c = 0, s[3] = {1, 1, 1};
};

Spatial split(const char* op, const Shape& x, bool channels_first, size_t spatial) {
  KCPP_CHECK(spatial >= 1 && spatial <= 3 && x.size() == spatial + 2, ValueError, op,
             ": Expected an input of rank ", spatial + 2, " (batch, ", spatial, " spatial dims, channels). Received: x.shape=",
             shape_str(x));
  Spatial r;
  r.rank = static_cast<int>(spatial);
  r.n = x[0];
  r.c = channels_first ? x[1] : x.back();
  for (size_t i = 0; i < spatial; ++i) r.s[3 - spatial + i] = x[i + (channels_first ? 2 : 1)];
  return r;
}

Spatial split(const char* op, const Tensor& x, bool channels_first, size_t spatial) {
  detail::check_float32(op, x, "x");
  return split(op, x.shape(), channels_first, spatial);
}

// Per-dim option padded to 3 dims with leading 1s.
void fill3(const char* op, const char* what, const std::vector<int64_t>& v, size_t spatial, int64_t* out) {
  KCPP_CHECK(v.size() == spatial, ValueError, op, ": `", what, "` must have ", spatial, " value(s). Received: ", what,
             " of length ", v.size());
  for (size_t i = 0; i < spatial; ++i) {
    KCPP_CHECK(v[i] >= 1, ValueError, op, ": `", what, "` must be positive. Received: ", what, "[", i, "]=", v[i]);
    out[3 - spatial + i] = v[i];
  }
}

Shape out_shape(const Spatial& x, int64_t channels, const int64_t* out, bool channels_first) {
  Shape s = {x.n};
  if (channels_first) s.push_back(channels);
  for (int i = 3 - x.rank; i < 3; ++i) s.push_back(out[i]);
  if (!channels_first) s.push_back(channels);
  return s;
}

// TensorFlow's padding before and after, for an output `out` from `in` (for a transposed op: the
// convolution from the transposed op's output back to its input).
void same_padding(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, int64_t* l, int64_t* r) {
  const int64_t dk = (k - 1) * dilation + 1;
  const int64_t total = std::max<int64_t>((out - 1) * stride + dk - in, 0);
  *l = total / 2;
  *r = total - *l;
}

std::string plan_key(const char* op, const Shape& x, uint64_t version, const void* w, const void* b) {
  std::string k = op;
  for (int64_t d : x) k += "," + std::to_string(d);
  k += "|v" + std::to_string(version) + "|" + std::to_string(reinterpret_cast<uintptr_t>(w)) + "|" +
       std::to_string(reinterpret_cast<uintptr_t>(b));
  return k;
}

// What a layer's plan cache holds per problem: oneDNN's plan, or why oneDNN refused it (the reference
// kernel then runs, with no new attempt at every call). KERASCPP_VERBOSE=dispatch prints each choice.
template <typename Plan>
struct Choice {
  std::shared_ptr<const Plan> plan;
  std::string why_not;
};

// problem: the shapes that tell the plan apart in a dispatch line, made only when a plan is.
template <typename Plan, typename Problem, typename MakePlan>
std::shared_ptr<const Choice<Plan>> choose(PlanCache* plans, const std::string& key, const char* family,
                                           Problem problem, MakePlan make_plan) {
  if (plans)
    if (auto found = std::static_pointer_cast<const Choice<Plan>>(plans->find(key))) return found;
  auto made = std::make_shared<Choice<Plan>>();
  made->plan = make_plan(&made->why_not);
  if (kernels::dispatch_verbose())
    kernels::log_dispatch(family, problem(), made->plan ? "onednn" : "ref", made->why_not);
  if (plans) plans->put(key, made);
  return made;
}

void run_conv(const kernels::ConvGeometry& g, const Tensor& x, const Tensor& kernel, const Tensor& bias, Tensor& y,
              PlanCache* plans, uint64_t version) {
  if (y.size() == 0) return;
  const float* b = bias.defined() ? bias.data<float>() : nullptr;
  const char* family = g.transpose ? "conv_transpose" : "conv";
  const std::string key = plans ? plan_key(family, x.shape(), version, kernel.raw_data(), b) : "";
  std::shared_ptr<const kernels::DnnlConvPlan> plan;
  if (x.size() > 0)
    plan = choose<kernels::DnnlConvPlan>(
               plans, key, family, [&] { return "x=" + shape_str(x.shape()) + " kernel=" + shape_str(kernel.shape()); },
               [&](std::string* why_not) { return kernels::dnnl_conv_plan(g, kernel.data<float>(), b, why_not); })
               ->plan;
  if (!plan) return kernels::ref::conv(g, x.data<float>(), kernel.data<float>(), b, y.data<float>());
  std::unique_ptr<char[]> scratch(new char[std::max<size_t>(kernels::dnnl_scratch_bytes(*plan), 1)]);
  kernels::dnnl_conv_run(*plan, x.data<float>(), y.data<float>(), scratch.get());
}

// Records conv / conv_transpose: gradients from oneDNN, or the reference where it refuses.
void record_conv(const char* op, const kernels::ConvGeometry& g, const Tensor& x, const Tensor& kernel,
                 const Tensor& bias, const Tensor& y) {
  Recorder* r = tape_for({&x, &kernel, &bias});
  if (!r) return;
  // Only the gradients the tape needs: a first layer's input (the data) needs none.
  const bool need_dx = r->tracks(x), need_dk = r->tracks(kernel), need_db = bias.defined() && r->tracks(bias);
  r->record(op, {x, kernel, bias}, y, [=](const Tensor& dy) {
    Tensor dx = Tensor::empty(x.shape()), dk = Tensor::empty(kernel.shape());
    Tensor db = bias.defined() ? Tensor::empty(bias.shape()) : Tensor();
    float* dbp = need_db ? db.data<float>() : nullptr;
    if (x.size() == 0 || dy.size() == 0) {
      std::fill(dk.data<float>(), dk.data<float>() + dk.size(), 0.f);
      std::fill(dx.data<float>(), dx.data<float>() + dx.size(), 0.f);
      if (dbp) std::fill(dbp, dbp + db.size(), 0.f);
      return Grads{dx, dk, db};
    }
    std::string why_not;
    float* dxp = need_dx ? dx.data<float>() : nullptr;
    float* dkp = need_dk ? dk.data<float>() : nullptr;
    const bool onednn =
        kernels::dnnl_conv_grad(g, x.data<float>(), kernel.data<float>(), dy.data<float>(), dxp, dkp, dbp, &why_not);
    if (!onednn) kernels::ref::conv_grad(g, x.data<float>(), kernel.data<float>(), dy.data<float>(), dxp, dkp, dbp);
    if (kernels::dispatch_verbose())  // made at every backward: printed once per problem
      kernels::log_dispatch_once(std::string(op) + "_grad", "x=" + shape_str(x.shape()) + " kernel=" + shape_str(kernel.shape()),
                                 onednn ? "onednn" : "ref", why_not);
    return Grads{need_dx ? dx : Tensor(), need_dk ? dk : Tensor(), need_db ? db : Tensor()};
  });
}

// A call's work buffer for a training plan: a tensor, so that a training loop's mapping cache keeps it.
Tensor work_buffer(size_t bytes) { return Tensor::empty({static_cast<int64_t>((bytes + 3) / 4)}); }

// A convolution that a tape records inside a layer (a training step): the layer's training plan, made
// once per input shape, set of gradients and thread count, runs the forward and the backward with the
// kernel of the call (kernels::DnnlConvTrainPlan). The inference plan, keyed by the weights' version,
// was made anew every step, and the backward's primitives at every call. False, with nothing recorded,
// where no tape records, no layer keeps plans, or oneDNN refuses or fails: run_conv and record_conv
// then. A backward that oneDNN fails runs the reference.
bool run_and_record_training(const char* op, const kernels::ConvGeometry& g, const Tensor& x, const Tensor& kernel,
                             const Tensor& bias, Tensor& y, PlanCache* plans) {
  if (!plans || x.size() == 0 || y.size() == 0) return false;
  Recorder* r = tape_for({&x, &kernel, &bias});
  if (!r) return false;
  const bool need_dx = r->tracks(x), need_dk = r->tracks(kernel), need_db = bias.defined() && r->tracks(bias);
  const std::string family = std::string(op) + "_train";
  const std::string wants = std::string(bias.defined() ? "B" : "") + (need_dx ? "x" : "") + (need_dk ? "k" : "") +
                            (need_db ? "b" : "") + "|t" + std::to_string(num_threads());
  auto plan = choose<kernels::DnnlConvTrainPlan>(
                  plans, plan_key((family + wants).c_str(), x.shape(), 0, nullptr, nullptr), family.c_str(),
                  [&] { return "x=" + shape_str(x.shape()) + " kernel=" + shape_str(kernel.shape()); },
                  [&](std::string* why_not) {
                    return kernels::dnnl_conv_train_plan(g, true, bias.defined(), need_dx, need_dk, need_db, why_not);
                  })
                  ->plan;
  if (!plan) return false;
  const float* b = bias.defined() ? bias.data<float>() : nullptr;
  std::string why_not;
  if (!kernels::dnnl_conv_train_forward(*plan, x.data<float>(), kernel.data<float>(), b, y.data<float>(),
                                        work_buffer(kernels::dnnl_train_forward_bytes(*plan)).raw_data(), &why_not))
    return false;
  r->record(op, {x, kernel, bias}, y, [=](const Tensor& dy) {
    Tensor dx = need_dx ? Tensor::empty(x.shape()) : Tensor(), dk = need_dk ? Tensor::empty(kernel.shape()) : Tensor();
    Tensor db = need_db ? Tensor::empty(bias.shape()) : Tensor();
    float* dxp = need_dx ? dx.data<float>() : nullptr;
    float* dkp = need_dk ? dk.data<float>() : nullptr;
    float* dbp = need_db ? db.data<float>() : nullptr;
    std::string failed;
    if (!kernels::dnnl_conv_train_grad(*plan, x.data<float>(), kernel.data<float>(), dy.data<float>(), dxp, dkp, dbp,
                                       work_buffer(kernels::dnnl_train_grad_bytes(*plan)).raw_data(), &failed))
      kernels::ref::conv_grad(g, x.data<float>(), kernel.data<float>(), dy.data<float>(), dxp, dkp, dbp);
    return Grads{dx, dk, db};
  });
  return true;
}

void check_bias(const char* op, const Tensor& bias, int64_t channels) {
  if (!bias.defined()) return;
  detail::check_float32(op, bias, "bias");
  KCPP_CHECK(bias.rank() == 1 && bias.dim(0) == channels, ValueError, op, ": Expected a bias of shape (", channels,
             ",). Received: bias.shape=", shape_str(bias.shape()));
}

}  // namespace

Padding padding_from_name(std::string_view name, const std::string& who) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "valid") return Padding::valid;
  if (s == "same") return Padding::same;
  if (s == "causal") return Padding::causal;
  KCPP_THROW(ValueError, who, ": The `padding` argument must be one of \"valid\", \"same\" (or \"causal\" for Conv1D). Received: padding=", name);
}

int64_t conv_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, Padding p) {
  const int64_t dk = (kernel - 1) * dilation + 1;
  if (p == Padding::valid) return in - dk < 0 ? in - dk + 1 : (in - dk) / stride + 1;
  return (in + stride - 1) / stride;  // same and causal
}

int64_t conv_transpose_output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, Padding p,
                                     int64_t output_padding) {
  const int64_t dk = kernel + (kernel - 1) * (dilation - 1);
  if (output_padding < 0) return p == Padding::valid ? in * stride + std::max<int64_t>(dk - stride, 0) : in * stride;
  const int64_t pad = p == Padding::same ? dk / 2 : 0;
  return (in - 1) * stride + dk - 2 * pad + output_padding;
}

namespace {

// conv_geometry, with ops::conv's check of the bias where ops::conv always made it (after the
// channels, before the strides), so that a call with several faults names the same one.
kernels::ConvGeometry geometry(const Shape& x, const Shape& kernel, const ConvOptions& o, int64_t batch,
                               const Tensor* bias) {
  const size_t spatial = kernel.size() >= 2 ? kernel.size() - 2 : 0;
  Spatial xs = split("conv", x, o.channels_first, spatial);
  xs.n = batch;
  kernels::ConvGeometry g;
  g.spatial = xs.rank, g.channels_first = o.channels_first, g.n = xs.n, g.ic = xs.c, g.oc = kernel.back();
  g.groups = o.groups;
  KCPP_CHECK(g.groups >= 1 && g.ic % g.groups == 0 && g.oc % g.groups == 0 && kernel[spatial] * g.groups == g.ic,
             ValueError, "conv: The kernel's input channels times groups must equal the input's channels, and groups must "
             "divide both channel counts. Received: x.shape=", shape_str(x), ", kernel.shape=",
             shape_str(kernel), ", groups=", o.groups);
  if (bias) check_bias("conv", *bias, g.oc);
  fill3("conv", "strides", o.strides, spatial, g.stride);
  fill3("conv", "dilation_rate", o.dilation_rate, spatial, g.dilation);
  for (size_t i = 0; i < spatial; ++i) {
    const size_t d = 3 - spatial + i;
    g.in[d] = xs.s[d], g.k[d] = kernel[i];
    g.out[d] = conv_output_length(g.in[d], g.k[d], g.stride[d], g.dilation[d], o.padding);
    KCPP_CHECK(g.out[d] > 0 || g.in[d] == 0, ValueError, "conv: Computed output size would be negative. Received: "
               "x.shape=", shape_str(x), ", kernel.shape=", shape_str(kernel), ", strides=", g.stride[d],
               ", dilation_rate=", g.dilation[d]);
    g.out[d] = std::max<int64_t>(g.out[d], 0);
    if (o.padding == Padding::same) same_padding(g.in[d], g.out[d], g.k[d], g.stride[d], g.dilation[d], &g.pad_l[d], &g.pad_r[d]);
    if (o.padding == Padding::causal) g.pad_l[d] = (g.k[d] - 1) * g.dilation[d];
  }
  return g;
}

}  // namespace

kernels::ConvGeometry conv_geometry(const Shape& x, const Shape& kernel, const ConvOptions& o, int64_t batch) {
  return geometry(x, kernel, o, batch, nullptr);
}

Tensor conv(const Tensor& x, const Tensor& kernel, const Tensor& bias, const ConvOptions& o, PlanCache* plans,
            uint64_t weights_version) {
  detail::check_float32("conv", kernel, "kernel");
  detail::check_float32("conv", x, "x");
  const kernels::ConvGeometry g = geometry(x.shape(), kernel.shape(), o, x.rank() > 0 ? x.dim(0) : 0, &bias);
  Spatial ys;  // the batch and rank out_shape reads, from the geometry already checked
  ys.rank = g.spatial, ys.n = g.n;
  Tensor y = Tensor::empty(out_shape(ys, g.oc, g.out, o.channels_first));
  if (run_and_record_training("conv", g, x, kernel, bias, y, plans)) return y;
  run_conv(g, x, kernel, bias, y, plans, weights_version);
  record_conv("conv", g, x, kernel, bias, y);
  return y;
}

Tensor conv_transpose(const Tensor& x, const Tensor& kernel, const Tensor& bias, const ConvOptions& o,
                      PlanCache* plans, uint64_t weights_version) {
  detail::check_float32("conv_transpose", kernel, "kernel");
  const size_t spatial = static_cast<size_t>(std::max(kernel.rank() - 2, 0));
  const Spatial xs = split("conv_transpose", x, o.channels_first, spatial);
  kernels::ConvGeometry g;
  g.transpose = true, g.spatial = xs.rank, g.channels_first = o.channels_first, g.n = xs.n, g.ic = xs.c;
  g.oc = kernel.dim(-2);
  KCPP_CHECK(kernel.dim(-1) == g.ic && o.groups == 1, ValueError, "conv_transpose: Expected a kernel of shape (*kernel_size, "
             "filters, ", g.ic, ") and groups=1. Received: kernel.shape=", shape_str(kernel.shape()), ", groups=", o.groups);
  KCPP_CHECK(o.padding != Padding::causal, ValueError, "conv_transpose: padding=\"causal\" is not supported");
  check_bias("conv_transpose", bias, g.oc);
  fill3("conv_transpose", "strides", o.strides, spatial, g.stride);
  fill3("conv_transpose", "dilation_rate", o.dilation_rate, spatial, g.dilation);
  KCPP_CHECK(o.output_padding.empty() || o.output_padding.size() == spatial, ValueError,
             "conv_transpose: `output_padding` must have ", spatial, " value(s)");
  for (size_t i = 0; i < spatial; ++i) {
    const size_t d = 3 - spatial + i;
    g.in[d] = xs.s[d], g.k[d] = kernel.dim(static_cast<int>(i));
    const int64_t op = o.output_padding.empty() ? -1 : o.output_padding[i];
    g.out[d] = conv_transpose_output_length(g.in[d], g.k[d], g.stride[d], g.dilation[d], o.padding, op);
    KCPP_CHECK(g.out[d] > 0 || g.in[d] == 0, ValueError, "conv_transpose: Computed output size would be negative. "
               "Received: x.shape=", shape_str(x.shape()), ", kernel.shape=", shape_str(kernel.shape()));
    const int64_t dk = (g.k[d] - 1) * g.dilation[d] + 1;
    if (o.padding == Padding::same) {
      int64_t unused;
      same_padding(g.out[d], g.in[d], g.k[d], g.stride[d], g.dilation[d], &g.pad_l[d], &unused);
    }
    // Whatever the convolution's own padding leaves on the right; negative with output_padding.
    g.pad_r[d] = (g.in[d] - 1) * g.stride[d] + dk - g.out[d] - g.pad_l[d];
  }
  Tensor y = Tensor::empty(out_shape(xs, g.oc, g.out, o.channels_first));
  if (run_and_record_training("conv_transpose", g, x, kernel, bias, y, plans)) return y;
  run_conv(g, x, kernel, bias, y, plans, weights_version);
  record_conv("conv_transpose", g, x, kernel, bias, y);
  return y;
}

kernels::PoolGeometry pool_geometry(const Shape& x, PoolMode mode, const std::vector<int64_t>& pool_size,
                                    const std::vector<int64_t>& strides, Padding padding, bool channels_first,
                                    int64_t batch) {
  const size_t spatial = pool_size.size();
  const Spatial xs = split("pool", x, channels_first, spatial);
  kernels::PoolGeometry g;
  g.spatial = xs.rank, g.channels_first = channels_first, g.n = batch, g.c = xs.c;
  g.kind = mode == PoolMode::max ? kernels::PoolKind::max : kernels::PoolKind::average;
  fill3("pool", "pool_size", pool_size, spatial, g.k);
  fill3("pool", "strides", strides, spatial, g.stride);
  KCPP_CHECK(padding != Padding::causal, ValueError, "pool: padding=\"causal\" is not supported");
  for (size_t d = 3 - spatial; d < 3; ++d) {
    g.in[d] = xs.s[d];
    g.out[d] = conv_output_length(g.in[d], g.k[d], g.stride[d], 1, padding);
    KCPP_CHECK(g.out[d] > 0, ValueError, "pool: Computed output size would be negative or zero. Received: x.shape=",
               shape_str(x), ", pool_size=", g.k[d], ", strides=", g.stride[d]);
    if (padding == Padding::same) same_padding(g.in[d], g.out[d], g.k[d], g.stride[d], 1, &g.pad_l[d], &g.pad_r[d]);
  }
  return g;
}

Tensor pool(const Tensor& x, PoolMode mode, const std::vector<int64_t>& pool_size, const std::vector<int64_t>& strides,
            Padding padding, bool channels_first, PlanCache* plans) {
  const Spatial xs = split("pool", x, channels_first, pool_size.size());
  const kernels::PoolGeometry g = pool_geometry(x.shape(), mode, pool_size, strides, padding, channels_first, xs.n);
  Tensor y = Tensor::empty(out_shape(xs, g.c, g.out, channels_first));
  if (y.size() == 0) return y;
  if (Recorder* r = tape_for({&x}))
    r->record("pool", {x}, y, [g, x](const Tensor& dy) {
      Tensor dx = Tensor::empty(x.shape());
      kernels::pool_grad(g, x.data<float>(), dy.data<float>(), dx.data<float>());
      return Grads{dx};
    });
  const char* family = mode == PoolMode::max ? "maxpool" : "avgpool";
  const std::string key = plans ? plan_key(family, x.shape(), 0, nullptr, nullptr) : "";
  std::shared_ptr<const kernels::DnnlPoolPlan> plan =
      choose<kernels::DnnlPoolPlan>(
          plans, key, family,
          [&] {
            std::string s = "x=" + shape_str(x.shape()) + " pool=(";
            for (size_t i = 0; i < pool_size.size(); ++i) s += (i ? ", " : "") + std::to_string(pool_size[i]);
            return s + ")";
          },
          [&](std::string* why_not) { return kernels::dnnl_pool_plan(g, why_not); })
          ->plan;
  if (!plan) {
    kernels::ref::pool(g, x.data<float>(), y.data<float>());
    return y;
  }
  std::unique_ptr<char[]> scratch(new char[std::max<size_t>(kernels::dnnl_scratch_bytes(*plan), 1)]);
  kernels::dnnl_pool_run(*plan, x.data<float>(), y.data<float>(), scratch.get());
  return y;
}

}  // namespace kerascpp::ops
