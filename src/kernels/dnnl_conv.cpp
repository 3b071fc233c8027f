// oneDNN convolution, deconvolution and pooling plans (see kernels/conv.h).
//
// x and y stay in Keras's layout (nwc / nhwc / ndhwc or the channels_first ones): oneDNN has direct
// kernels for them, and a per-call reorder of activations would cost more than it saves. The weights
// are described with Keras's strides and reordered once, at plan time, into whatever blocked layout
// the chosen primitive wants. Scratchpad memory is user-managed so that one plan can run on several
// threads at once. oneDNN's own process-wide primitive cache is switched off: plans belong to the
// layer that made them and die with it.
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>
#include <cstring>

#include "kernels/conv.h"

namespace kerascpp::kernels {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

const dnnl::engine& cpu_engine() {
  // A pure resource (design §1): immutable after this first call, and it holds no model state.
  static const dnnl::engine engine = [] {
    dnnl::set_primitive_cache_capacity(0);
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

// Spatial dims of a geometry, last `spatial` of (d, h, w).
memory::dims spatial_dims(const int64_t* v, int spatial) { return memory::dims(v + 3 - spatial, v + 3); }

memory::dims act_dims(int64_t n, int64_t c, const int64_t* s, int spatial) {
  memory::dims d = {n, c};
  for (int64_t v : spatial_dims(s, spatial)) d.push_back(v);
  return d;
}

tag act_tag(bool channels_first, int spatial) {
  static const tag last[] = {tag::nwc, tag::nhwc, tag::ndhwc}, first[] = {tag::ncw, tag::nchw, tag::ncdhw};
  return channels_first ? first[spatial - 1] : last[spatial - 1];
}

// Keras's kernel as a strided oneDNN descriptor:
//   convolution (kd, kh, kw, icg, oc) -> dims (oc, ic, k...) or, grouped, (g, ocg, icg, k...)
//   transposed  (kd, kh, kw, oc, ic)  -> dims (oc, ic, k...)
memory::desc keras_weights_desc(const ConvGeometry& g) {
  const int64_t icg = g.ic / g.groups, ocg = g.oc / g.groups;
  memory::dims k = spatial_dims(g.k, g.spatial), kstride(k.size());
  int64_t inner = icg * g.oc;  // elements per kernel tap
  for (int i = static_cast<int>(k.size()) - 1; i >= 0; --i) kstride[i] = inner, inner *= k[i];
  memory::dims dims, strides;
  if (g.transpose) {
    dims = {g.oc, g.ic}, strides = {g.ic, 1};
  } else if (g.groups == 1) {
    dims = {g.oc, g.ic}, strides = {1, g.oc};
  } else {
    dims = {g.groups, ocg, icg}, strides = {ocg, 1, g.oc};
  }
  dims.insert(dims.end(), k.begin(), k.end());
  strides.insert(strides.end(), kstride.begin(), kstride.end());
  return memory::desc(dims, memory::data_type::f32, strides);
}

// KERASCPP_ONEDNN=off (read once): every plan refused, so that convolutions and poolings run on the
// reference kernels (a debugging aid, and how tests reach the paths taken where oneDNN refuses).
bool onednn_off(std::string* why_not) {
  static const bool off = [] {
    const char* v = std::getenv("KERASCPP_ONEDNN");
    return v && (std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0);
  }();
  if (off) *why_not = "KERASCPP_ONEDNN=off";
  return off;
}

memory::desc any_like(const memory::desc& d) { return memory::desc(d.dims(), memory::data_type::f32, tag::any); }

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

}  // namespace

class DnnlConvPlan {
 public:
  dnnl::primitive prim;
  memory::desc src, dst, scratch;
  memory weights, bias;  // owned copies in the primitive's layout
  bool has_bias = false;
};

class DnnlPoolPlan {
 public:
  dnnl::primitive prim;
  memory::desc src, dst, scratch;
};

std::shared_ptr<const DnnlConvPlan> dnnl_conv_plan(const ConvGeometry& g, const float* kernel,
                                                   const float* bias, std::string* why_not,
                                                   const std::vector<ConvPostOp>& post_ops) {
  if (onednn_off(why_not)) return nullptr;
  if (g.transpose && g.groups != 1) {
    *why_not = "oneDNN path: grouped transposed convolution not wired";
    return nullptr;
  }
  dnnl::primitive_attr attr = user_scratchpad();
  if (!post_ops.empty()) {
    dnnl::post_ops ops;
    for (const ConvPostOp& op : post_ops) {
      if (op.sum)
        ops.append_sum(1.f);
      else
        ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip_v2, op.lo, op.hi);
    }
    attr.set_post_ops(ops);
  }
  try {
    const dnnl::engine& eng = cpu_engine();
    auto plan = std::make_shared<DnnlConvPlan>();
    const tag t = act_tag(g.channels_first, g.spatial);
    plan->src = memory::desc(act_dims(g.n, g.ic, g.in, g.spatial), memory::data_type::f32, t);
    plan->dst = memory::desc(act_dims(g.n, g.oc, g.out, g.spatial), memory::data_type::f32, t);
    const memory::desc user_w = keras_weights_desc(g);
    const memory::desc bias_md = bias ? memory::desc({g.oc}, memory::data_type::f32, tag::x) : memory::desc();
    memory::dims strides = spatial_dims(g.stride, g.spatial), dil = spatial_dims(g.dilation, g.spatial);
    for (auto& d : dil) d -= 1;  // oneDNN counts the gaps, Keras the step
    const memory::dims pl = spatial_dims(g.pad_l, g.spatial), pr = spatial_dims(g.pad_r, g.spatial);
    memory::desc wanted_w;
    if (g.transpose) {
      dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                          plan->src, any_like(user_w), bias_md, plan->dst, strides, dil, pl, pr);
      dnnl::deconvolution_forward::primitive_desc pd(d, attr, eng);
      plan->prim = dnnl::deconvolution_forward(pd);
      wanted_w = pd.weights_desc(), plan->scratch = pd.scratchpad_desc();
    } else {
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                        plan->src, any_like(user_w), bias_md, plan->dst, strides, dil, pl, pr);
      dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
      plan->prim = dnnl::convolution_forward(pd);
      wanted_w = pd.weights_desc(), plan->scratch = pd.scratchpad_desc();
    }
    dnnl::stream s(eng);
    memory user(user_w, eng, const_cast<float*>(kernel));
    plan->weights = memory(wanted_w, eng);
    dnnl::reorder(user, plan->weights).execute(s, user, plan->weights);
    if (bias) {
      plan->has_bias = true;
      plan->bias = memory(bias_md, eng);
      memory user_b(bias_md, eng, const_cast<float*>(bias));
      dnnl::reorder(user_b, plan->bias).execute(s, user_b, plan->bias);
    }
    s.wait();
    return plan;
  } catch (const dnnl::error& e) {
    *why_not = std::string("oneDNN refused: ") + e.what();
    return nullptr;
  }
}

size_t dnnl_scratch_bytes(const DnnlConvPlan& p) { return p.scratch.get_size(); }
size_t dnnl_scratch_bytes(const DnnlPoolPlan& p) { return p.scratch.get_size(); }

void dnnl_conv_run(const DnnlConvPlan& p, const float* x, float* y, void* scratch) {
  const dnnl::engine& eng = cpu_engine();
  dnnl::stream s(eng);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(p.src, eng, const_cast<float*>(x))},
                                          {DNNL_ARG_WEIGHTS, p.weights},
                                          {DNNL_ARG_DST, memory(p.dst, eng, y)},
                                          {DNNL_ARG_SCRATCHPAD, memory(p.scratch, eng, scratch)}};
  if (p.has_bias) args.emplace(DNNL_ARG_BIAS, p.bias);
  p.prim.execute(s, args);
  s.wait();
}

std::shared_ptr<const DnnlPoolPlan> dnnl_pool_plan(const PoolGeometry& g, std::string* why_not) {
  if (onednn_off(why_not)) return nullptr;
  try {
    const dnnl::engine& eng = cpu_engine();
    auto plan = std::make_shared<DnnlPoolPlan>();
    const tag t = act_tag(g.channels_first, g.spatial);
    plan->src = memory::desc(act_dims(g.n, g.c, g.in, g.spatial), memory::data_type::f32, t);
    plan->dst = memory::desc(act_dims(g.n, g.c, g.out, g.spatial), memory::data_type::f32, t);
    // TensorFlow's average pooling divides by the cells inside the input only.
    const auto alg = g.kind == PoolKind::max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
    dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, plan->src, plan->dst,
                                  spatial_dims(g.stride, g.spatial), spatial_dims(g.k, g.spatial),
                                  spatial_dims(g.pad_l, g.spatial), spatial_dims(g.pad_r, g.spatial));
    dnnl::pooling_forward::primitive_desc pd(d, user_scratchpad(), eng);
    plan->prim = dnnl::pooling_forward(pd);
    plan->scratch = pd.scratchpad_desc();
    return plan;
  } catch (const dnnl::error& e) {
    *why_not = std::string("oneDNN refused: ") + e.what();
    return nullptr;
  }
}

void dnnl_pool_run(const DnnlPoolPlan& p, const float* x, float* y, void* scratch) {
  const dnnl::engine& eng = cpu_engine();
  dnnl::stream s(eng);
  p.prim.execute(s, {{DNNL_ARG_SRC, memory(p.src, eng, const_cast<float*>(x))},
                     {DNNL_ARG_DST, memory(p.dst, eng, y)},
                     {DNNL_ARG_SCRATCHPAD, memory(p.scratch, eng, scratch)}});
  s.wait();
}

// Backward of a convolution or transposed convolution: data and weights primitives made per call
// (training rebuilds weight layouts every step anyway), with the gradients written in Keras's
// layouts. False (and *why_not) when oneDNN refuses; the caller then runs ref::conv_grad.
bool dnnl_conv_grad(const ConvGeometry& g, const float* x, const float* kernel, const float* dy, float* dx,
                    float* dkernel, float* dbias, std::string* why_not) {
  if (onednn_off(why_not)) return false;
  if (g.transpose && g.groups != 1) {
    *why_not = "oneDNN path: grouped transposed convolution not wired";
    return false;
  }
  try {
    const dnnl::engine& eng = cpu_engine();
    dnnl::stream s(eng);
    const tag t = act_tag(g.channels_first, g.spatial);
    const memory::desc src(act_dims(g.n, g.ic, g.in, g.spatial), memory::data_type::f32, t);
    const memory::desc dst(act_dims(g.n, g.oc, g.out, g.spatial), memory::data_type::f32, t);
    const memory::desc user_w = keras_weights_desc(g);
    const memory::desc bias_md = dbias ? memory::desc({g.oc}, memory::data_type::f32, tag::x) : memory::desc();
    memory::dims strides = spatial_dims(g.stride, g.spatial), dil = spatial_dims(g.dilation, g.spatial);
    for (auto& d : dil) d -= 1;
    const memory::dims pl = spatial_dims(g.pad_l, g.spatial), pr = spatial_dims(g.pad_r, g.spatial);
    const auto fwd_alg = g.transpose ? dnnl::algorithm::deconvolution_direct : dnnl::algorithm::convolution_direct;
    memory user_kernel(user_w, eng, const_cast<float*>(kernel));
    auto run = [&](auto fwd_tag, auto bwd_data_tag, auto bwd_weights_tag) {
      using Fwd = decltype(fwd_tag);
      using BwdData = decltype(bwd_data_tag);
      using BwdWeights = decltype(bwd_weights_tag);
      typename Fwd::desc fd(dnnl::prop_kind::forward_training, fwd_alg, src, any_like(user_w), bias_md, dst, strides,
                            dil, pl, pr);
      typename Fwd::primitive_desc fpd(fd, eng);
      if (dx) {
        typename BwdData::desc dd(fwd_alg, src, any_like(user_w), dst, strides, dil, pl, pr);
        typename BwdData::primitive_desc dpd(dd, user_scratchpad(), eng, fpd);
        memory w(dpd.weights_desc(), eng);
        dnnl::reorder(user_kernel, w).execute(s, user_kernel, w);
        std::vector<char> scratch(std::max<size_t>(dpd.scratchpad_desc().get_size(), 1));
        BwdData(dpd).execute(s, {{DNNL_ARG_DIFF_DST, memory(dst, eng, const_cast<float*>(dy))},
                                 {DNNL_ARG_WEIGHTS, w},
                                 {DNNL_ARG_DIFF_SRC, memory(src, eng, dx)},
                                 {DNNL_ARG_SCRATCHPAD, memory(dpd.scratchpad_desc(), eng, scratch.data())}});
      }
      if (dkernel || dbias) {
        typename BwdWeights::desc wd(fwd_alg, src, any_like(user_w), bias_md, dst, strides, dil, pl, pr);
        typename BwdWeights::primitive_desc wpd(wd, user_scratchpad(), eng, fpd);
        memory dw(wpd.diff_weights_desc(), eng);
        std::vector<char> scratch(std::max<size_t>(wpd.scratchpad_desc().get_size(), 1));
        std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(src, eng, const_cast<float*>(x))},
                                                {DNNL_ARG_DIFF_DST, memory(dst, eng, const_cast<float*>(dy))},
                                                {DNNL_ARG_DIFF_WEIGHTS, dw},
                                                {DNNL_ARG_SCRATCHPAD, memory(wpd.scratchpad_desc(), eng, scratch.data())}};
        if (dbias) args.emplace(DNNL_ARG_DIFF_BIAS, memory(bias_md, eng, dbias));
        BwdWeights(wpd).execute(s, args);
        if (dkernel) {
          memory user_dw(user_w, eng, dkernel);
          dnnl::reorder(dw, user_dw).execute(s, dw, user_dw);
        }
      }
      s.wait();
    };
    if (g.transpose)
      run(dnnl::deconvolution_forward(), dnnl::deconvolution_backward_data(), dnnl::deconvolution_backward_weights());
    else
      run(dnnl::convolution_forward(), dnnl::convolution_backward_data(), dnnl::convolution_backward_weights());
    return true;
  } catch (const dnnl::error& e) {
    *why_not = std::string("oneDNN refused: ") + e.what();
    return false;
  }
}

}  // namespace kerascpp::kernels
