// oneDNN convolution, deconvolution and pooling plans (see kernels/conv.h).
//
// x and y stay in Keras's layout (nwc / nhwc / ndhwc or the channels_first ones): oneDNN has direct
// kernels for them, and a per-call reorder of activations would cost more than it saves. The weights
// are described with Keras's strides and reordered once, at plan time, into whatever blocked layout
// the chosen primitive wants (a training plan, whose kernel changes every step, reorders it per
// call). Scratchpad memory is user-managed so that one plan can run on several threads at once.
// oneDNN's own process-wide primitive cache is switched off: plans belong to the layer that made them
// and die with it.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "kernels/conv.h"
#include "kerascpp/tensor.h"
#include "kerascpp/threading.h"

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

// What every oneDNN convolution of a geometry is described by: x and y in Keras's layout, the kernel
// as Keras stores it, and the strides, gaps between taps and padding as oneDNN counts them.
struct ConvDescs {
  memory::desc src, dst, user_w;
  memory::dims strides, dil, pl, pr;
  dnnl::algorithm alg;
};

ConvDescs conv_descs(const ConvGeometry& g) {
  ConvDescs d;
  const tag t = act_tag(g.channels_first, g.spatial);
  d.src = memory::desc(act_dims(g.n, g.ic, g.in, g.spatial), memory::data_type::f32, t);
  d.dst = memory::desc(act_dims(g.n, g.oc, g.out, g.spatial), memory::data_type::f32, t);
  d.user_w = keras_weights_desc(g);
  d.strides = spatial_dims(g.stride, g.spatial), d.dil = spatial_dims(g.dilation, g.spatial);
  for (auto& v : d.dil) v -= 1;  // oneDNN counts the gaps, Keras the step
  d.pl = spatial_dims(g.pad_l, g.spatial), d.pr = spatial_dims(g.pad_r, g.spatial);
  d.alg = g.transpose ? dnnl::algorithm::deconvolution_direct : dnnl::algorithm::convolution_direct;
  return d;
}

// Why oneDNN takes no convolution of this geometry at all, or null.
const char* unwired(const ConvGeometry& g) {
  return g.transpose && g.groups != 1 ? "oneDNN path: grouped transposed convolution not wired" : nullptr;
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

// oneDNN here runs on OpenMP (Debian's: libgomp). Its thread count is a per-thread setting (an ICV),
// so a plan can run one call on the calling thread alone without touching any other thread.
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
extern "C" int omp_get_max_threads(void);
extern "C" void omp_set_num_threads(int);
#else
int omp_get_max_threads() { return 0; }  // another runtime: small plans run as oneDNN decides
void omp_set_num_threads(int) {}
#endif

// Work (multiply-adds, or window reads for a pooling) under which a plan runs on the calling thread
// alone, made and run so: OpenMP's fork and join costs more than the second thread saves there.
// Measured: Conv2D(8, 3x3) on one 8x8x4 input (10k multiply-adds) took 4.97 us on two threads
// against 2.50 us on one.
constexpr int64_t kOneThreadWork = int64_t{1} << 17;

// The threads a oneDNN call is made and run with (it sizes its blocking by them, so a plan keeps the
// count it was made with): one under kOneThreadWork, else kerascpp::num_threads(), or the calling
// thread's OpenMP count when that is 0.
int threads_for(int64_t work) {
  if (work < kOneThreadWork) return 1;
  const int n = num_threads();
  return n > 0 ? n : omp_get_max_threads();
}

// A convolution's multiply-adds (its forward's; the backward's are of the same order).
int64_t conv_work(const ConvGeometry& g) {
  int64_t work = g.n * g.oc * (g.ic / g.groups);
  for (int i = 0; i < 3; ++i) work *= (g.transpose ? g.in[i] : g.out[i]) * g.k[i];
  return work;
}

// Sets the calling thread's OpenMP thread count to n while alive (restoring it after); 0: left alone.
class Threads {
 public:
  explicit Threads(int n) : before_(n > 0 ? omp_get_max_threads() : 0) {
    if (n > 0 && n != before_) omp_set_num_threads(n);
  }
  ~Threads() {
    if (before_ > 0 && omp_get_max_threads() != before_) omp_set_num_threads(before_);
  }
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;

 private:
  int before_;
};

// What one call runs with: a stream and the memory objects of the arguments, whose data handles are
// set to the call's buffers. Made once and kept for the next call (Contexts), so that a warm call
// allocates nothing: making them per call was a third of a small convolution's 2.5 us (malloc and
// free, perf).
struct Context {
  dnnl::stream stream;
  memory src, dst, scratch;
  std::unordered_map<int, memory> args;
};

// The contexts of one plan not in use: a call takes one (or makes one when all are in use by other
// threads) and gives it back, so a plan holds as many as it ever ran calls at once.
class Contexts {
 public:
  std::unique_ptr<Context> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return nullptr;
    std::unique_ptr<Context> c = std::move(free_.back());
    free_.pop_back();
    return c;
  }
  void give_back(std::unique_ptr<Context> c) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(c));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Context>> free_;
};

std::unique_ptr<Context> make_context(const memory::desc& src, const memory::desc& dst, const memory::desc& scratch) {
  const dnnl::engine& eng = cpu_engine();
  auto c = std::make_unique<Context>();
  c->stream = dnnl::stream(eng);
  c->src = memory(src, eng, DNNL_MEMORY_NONE);
  c->dst = memory(dst, eng, DNNL_MEMORY_NONE);
  c->scratch = memory(scratch, eng, DNNL_MEMORY_NONE);
  c->args = {{DNNL_ARG_SRC, c->src}, {DNNL_ARG_DST, c->dst}, {DNNL_ARG_SCRATCHPAD, c->scratch}};
  return c;
}

// Runs prim on x -> y with a context of `contexts` (extra: arguments every call shares, the weights).
void run_with_context(const dnnl::primitive& prim, Contexts& contexts, const memory::desc& src, const memory::desc& dst,
                      const memory::desc& scratch, const std::unordered_map<int, memory>& extra, const float* x,
                      float* y, void* scratch_data, int threads) {
  Threads use(threads);
  std::unique_ptr<Context> c = contexts.take();
  if (!c) {
    c = make_context(src, dst, scratch);
    c->args.insert(extra.begin(), extra.end());
  }
  c->src.set_data_handle(const_cast<float*>(x));
  c->dst.set_data_handle(y);
  c->scratch.set_data_handle(scratch_data);
  prim.execute(c->stream, c->args);
  c->stream.wait();
  contexts.give_back(std::move(c));
}

}  // namespace

class DnnlConvPlan {
 public:
  dnnl::primitive prim;
  memory::desc src, dst, scratch;
  // The weights' bytes, from Storage::allocate: transparent huge pages for the big ones where the
  // system allows them, so that streaming ResNet50's 100 MB of weights per image takes fewer TLB
  // misses (batch 1: about 2 % faster on an Intel Xeon than oneDNN's own allocation).
  std::shared_ptr<Storage> weight_bytes;
  memory weights, bias;  // copies in the primitive's layout (the weights in weight_bytes)
  bool has_bias = false;
  std::unordered_map<int, memory> fixed_args;  // the weights and bias, for every call
  int threads = 1;  // made and run with these (threads_for)
  mutable Contexts contexts;
};

class DnnlPoolPlan {
 public:
  dnnl::primitive prim;
  memory::desc src, dst, scratch;
  int threads = 1;
  mutable Contexts contexts;
};

std::shared_ptr<const DnnlConvPlan> dnnl_conv_plan(const ConvGeometry& g, const float* kernel,
                                                   const float* bias, std::string* why_not,
                                                   const std::vector<ConvPostOp>& post_ops) {
  if (onednn_off(why_not)) return nullptr;
  if (const char* why = unwired(g)) {
    *why_not = why;
    return nullptr;
  }
  const int threads = threads_for(conv_work(g));  // made and run with these: oneDNN sizes its blocking by them
  Threads use(threads);
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
    plan->threads = threads;
    const ConvDescs d = conv_descs(g);
    plan->src = d.src, plan->dst = d.dst;
    const memory::desc& user_w = d.user_w;
    const memory::desc bias_md = bias ? memory::desc({g.oc}, memory::data_type::f32, tag::x) : memory::desc();
    memory::desc wanted_w;
    if (g.transpose) {
      dnnl::deconvolution_forward::desc fd(dnnl::prop_kind::forward_inference, d.alg, plan->src, any_like(user_w),
                                           bias_md, plan->dst, d.strides, d.dil, d.pl, d.pr);
      dnnl::deconvolution_forward::primitive_desc pd(fd, attr, eng);
      plan->prim = dnnl::deconvolution_forward(pd);
      wanted_w = pd.weights_desc(), plan->scratch = pd.scratchpad_desc();
    } else {
      dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_inference, d.alg, plan->src, any_like(user_w),
                                         bias_md, plan->dst, d.strides, d.dil, d.pl, d.pr);
      dnnl::convolution_forward::primitive_desc pd(fd, attr, eng);
      plan->prim = dnnl::convolution_forward(pd);
      wanted_w = pd.weights_desc(), plan->scratch = pd.scratchpad_desc();
    }
    dnnl::stream s(eng);
    memory user(user_w, eng, const_cast<float*>(kernel));
    plan->weight_bytes = Storage::allocate(wanted_w.get_size());
    plan->weights = memory(wanted_w, eng, plan->weight_bytes->data());
    dnnl::reorder(user, plan->weights).execute(s, user, plan->weights);
    if (bias) {
      plan->has_bias = true;
      plan->bias = memory(bias_md, eng);
      memory user_b(bias_md, eng, const_cast<float*>(bias));
      dnnl::reorder(user_b, plan->bias).execute(s, user_b, plan->bias);
    }
    s.wait();
    plan->fixed_args = {{DNNL_ARG_WEIGHTS, plan->weights}};
    if (plan->has_bias) plan->fixed_args.emplace(DNNL_ARG_BIAS, plan->bias);
    return plan;
  } catch (const dnnl::error& e) {
    *why_not = std::string("oneDNN refused: ") + e.what();
    return nullptr;
  } catch (const std::bad_alloc&) {  // no memory for the weights' copy: the reference kernel needs none
    *why_not = "no memory for oneDNN's copy of the weights";
    return nullptr;
  }
}

size_t dnnl_scratch_bytes(const DnnlConvPlan& p) { return p.scratch.get_size(); }
size_t dnnl_scratch_bytes(const DnnlPoolPlan& p) { return p.scratch.get_size(); }

void dnnl_conv_run(const DnnlConvPlan& p, const float* x, float* y, void* scratch) {
  run_with_context(p.prim, p.contexts, p.src, p.dst, p.scratch, p.fixed_args, x, y, scratch, p.threads);
}

std::shared_ptr<const DnnlPoolPlan> dnnl_pool_plan(const PoolGeometry& g, std::string* why_not) {
  if (onednn_off(why_not)) return nullptr;
  int64_t work = g.n * g.c;
  for (int i = 0; i < 3; ++i) work *= g.out[i] * g.k[i];
  const int threads = threads_for(work);
  Threads use(threads);
  try {
    const dnnl::engine& eng = cpu_engine();
    auto plan = std::make_shared<DnnlPoolPlan>();
    plan->threads = threads;
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
  run_with_context(p.prim, p.contexts, p.src, p.dst, p.scratch, {}, x, y, scratch, p.threads);
}

// A training step's convolution. Its primitives and the reorders between Keras's kernel layout and
// theirs depend on the geometry alone, so they are made once (primitive creation generates code: made
// at every call, as before, it was 2 of ResNet50's and the CNN's 256 KiB code mappings a call, and
// the forward plan keyed by the weights' version was made anew every step). The kernel, which every
// step changes, is reordered per call into the caller's work buffer. The primitives are the ones a
// plan and the per-call backward used, from the same descriptors: the same kernels, the same bits.
// Every primitive, reorders included, takes its scratchpad from the call (user mode), so that one plan
// runs on several threads at once.
class DnnlConvTrainPlan {
 public:
  int threads = 1;
  memory::desc src, dst, user_w, bias;  // bias: the forward's (empty without one)
  bool has_forward = false, has_data = false, has_weights = false, has_dbias = false;
  dnnl::primitive fwd, to_fwd_w;
  dnnl::primitive data, to_data_w;       // backward data, and Keras's kernel into its layout
  dnnl::primitive weights, from_diff_w;  // backward weights, and its gradient into Keras's layout
  memory::desc dbias;
  // The call's buffers, in this order in its work buffer (each at a multiple of 64 bytes).
  std::vector<memory::desc> forward_parts;  // fwd_w, fwd scratch, to_fwd_w scratch
  std::vector<memory::desc> grad_parts;     // data_w, data scratch, to_data_w scratch, diff_w, weights
                                            // scratch, from_diff_w scratch (those of the wanted gradients)
};

namespace {

size_t round64(size_t bytes) { return (bytes + 63) / 64 * 64; }

size_t total_bytes(const std::vector<memory::desc>& parts) {
  size_t total = 0;
  for (const memory::desc& d : parts) total += round64(d.get_size());
  return std::max<size_t>(total, 64);
}

// The parts' memory objects, laid out one after another in `work`.
std::vector<memory> carve(const std::vector<memory::desc>& parts, void* work) {
  const dnnl::engine& eng = cpu_engine();
  std::vector<memory> out;
  char* at = static_cast<char*>(work);
  for (const memory::desc& d : parts) {
    out.emplace_back(d, eng, at);
    at += round64(d.get_size());
  }
  return out;
}

dnnl::reorder::primitive_desc reorder_between(const memory::desc& from, const memory::desc& to) {
  const dnnl::engine& eng = cpu_engine();
  return dnnl::reorder::primitive_desc(eng, from, eng, to, user_scratchpad());
}

template <typename Fwd, typename BwdData, typename BwdWeights>
void make_train_primitives(const ConvDescs& d, DnnlConvTrainPlan& p) {
  const dnnl::engine& eng = cpu_engine();
  const memory::desc any_w = any_like(p.user_w);
  if (p.has_forward) {
    typename Fwd::desc fd(dnnl::prop_kind::forward_inference, d.alg, p.src, any_w, p.bias, p.dst, d.strides, d.dil,
                          d.pl, d.pr);
    typename Fwd::primitive_desc fpd(fd, user_scratchpad(), eng);
    const auto to = reorder_between(p.user_w, fpd.weights_desc());
    p.fwd = Fwd(fpd), p.to_fwd_w = dnnl::reorder(to);
    p.forward_parts = {fpd.weights_desc(), fpd.scratchpad_desc(), to.scratchpad_desc()};
  }
  if (!p.has_data && !p.has_weights) return;
  // The backward's hint: a forward for training, with the bias exactly when its gradient is wanted.
  typename Fwd::desc hd(dnnl::prop_kind::forward_training, d.alg, p.src, any_w, p.dbias, p.dst, d.strides, d.dil,
                        d.pl, d.pr);
  typename Fwd::primitive_desc hint(hd, eng);
  if (p.has_data) {
    typename BwdData::desc dd(d.alg, p.src, any_w, p.dst, d.strides, d.dil, d.pl, d.pr);
    typename BwdData::primitive_desc dpd(dd, user_scratchpad(), eng, hint);
    const auto to = reorder_between(p.user_w, dpd.weights_desc());
    p.data = BwdData(dpd), p.to_data_w = dnnl::reorder(to);
    p.grad_parts = {dpd.weights_desc(), dpd.scratchpad_desc(), to.scratchpad_desc()};
  }
  if (p.has_weights) {
    typename BwdWeights::desc wd(d.alg, p.src, any_w, p.dbias, p.dst, d.strides, d.dil, d.pl, d.pr);
    typename BwdWeights::primitive_desc wpd(wd, user_scratchpad(), eng, hint);
    const auto from = reorder_between(wpd.diff_weights_desc(), p.user_w);
    p.weights = BwdWeights(wpd), p.from_diff_w = dnnl::reorder(from);
    for (const memory::desc& part : {wpd.diff_weights_desc(), wpd.scratchpad_desc(), from.scratchpad_desc()})
      p.grad_parts.push_back(part);
  }
}

}  // namespace

std::shared_ptr<const DnnlConvTrainPlan> dnnl_conv_train_plan(const ConvGeometry& g, bool forward, bool bias,
                                                               bool dx, bool dweights, bool dbias,
                                                               std::string* why_not) {
  if (onednn_off(why_not)) return nullptr;
  if (const char* why = unwired(g)) {
    *why_not = why;
    return nullptr;
  }
  auto p = std::make_shared<DnnlConvTrainPlan>();
  p->threads = threads_for(conv_work(g));
  Threads use(p->threads);
  try {
    const ConvDescs d = conv_descs(g);
    p->src = d.src, p->dst = d.dst, p->user_w = d.user_w;
    const memory::desc bias_md({g.oc}, memory::data_type::f32, tag::x);
    if (bias) p->bias = bias_md;
    if (dbias) p->dbias = bias_md;
    p->has_forward = forward, p->has_data = dx, p->has_weights = dweights || dbias, p->has_dbias = dbias;
    if (g.transpose)
      make_train_primitives<dnnl::deconvolution_forward, dnnl::deconvolution_backward_data,
                            dnnl::deconvolution_backward_weights>(d, *p);
    else
      make_train_primitives<dnnl::convolution_forward, dnnl::convolution_backward_data,
                            dnnl::convolution_backward_weights>(d, *p);
    return p;
  } catch (const dnnl::error& e) {
    *why_not = std::string("oneDNN refused: ") + e.what();
    return nullptr;
  }
}

size_t dnnl_train_forward_bytes(const DnnlConvTrainPlan& p) { return total_bytes(p.forward_parts); }
size_t dnnl_train_grad_bytes(const DnnlConvTrainPlan& p) { return total_bytes(p.grad_parts); }

bool dnnl_conv_train_forward(const DnnlConvTrainPlan& p, const float* x, const float* kernel, const float* bias,
                             float* y, void* work, std::string* why_not) {
  if (!p.has_forward || (bias != nullptr) == p.bias.is_zero()) {
    *why_not = "the training plan was made for another forward";
    return false;
  }
  try {
    Threads use(p.threads);
    const dnnl::engine& eng = cpu_engine();
    dnnl::stream s(eng);
    const std::vector<memory> part = carve(p.forward_parts, work);  // fwd_w, scratch, reorder scratch
    memory user(p.user_w, eng, const_cast<float*>(kernel));
    p.to_fwd_w.execute(s, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, part[0]}, {DNNL_ARG_SCRATCHPAD, part[2]}});
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(p.src, eng, const_cast<float*>(x))},
                                            {DNNL_ARG_WEIGHTS, part[0]},
                                            {DNNL_ARG_DST, memory(p.dst, eng, y)},
                                            {DNNL_ARG_SCRATCHPAD, part[1]}};
    if (bias) args.emplace(DNNL_ARG_BIAS, memory(p.bias, eng, const_cast<float*>(bias)));
    p.fwd.execute(s, args);
    s.wait();
    return true;
  } catch (const dnnl::error& e) {
    *why_not = std::string("oneDNN failed: ") + e.what();
    return false;
  }
}

bool dnnl_conv_train_grad(const DnnlConvTrainPlan& p, const float* x, const float* kernel, const float* dy, float* dx,
                          float* dkernel, float* dbias, void* work, std::string* why_not) {
  if ((dx != nullptr) != p.has_data || (dbias != nullptr) != p.has_dbias || (dkernel && !p.has_weights)) {
    *why_not = "the training plan was made for other gradients";
    return false;
  }
  try {
    Threads use(p.threads);
    const dnnl::engine& eng = cpu_engine();
    dnnl::stream s(eng);
    const std::vector<memory> part = carve(p.grad_parts, work);
    const memory dy_m(p.dst, eng, const_cast<float*>(dy));
    const memory user(p.user_w, eng, const_cast<float*>(kernel));
    size_t next = 0;
    if (p.has_data) {  // data_w, scratch, reorder scratch
      p.to_data_w.execute(s, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, part[0]}, {DNNL_ARG_SCRATCHPAD, part[2]}});
      p.data.execute(s, {{DNNL_ARG_DIFF_DST, dy_m},
                         {DNNL_ARG_WEIGHTS, part[0]},
                         {DNNL_ARG_DIFF_SRC, memory(p.src, eng, dx)},
                         {DNNL_ARG_SCRATCHPAD, part[1]}});
      next = 3;
    }
    if (p.has_weights) {  // diff_w, scratch, reorder scratch
      const memory& dw = part[next];
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(p.src, eng, const_cast<float*>(x))},
                                              {DNNL_ARG_DIFF_DST, dy_m},
                                              {DNNL_ARG_DIFF_WEIGHTS, dw},
                                              {DNNL_ARG_SCRATCHPAD, part[next + 1]}};
      if (p.has_dbias) args.emplace(DNNL_ARG_DIFF_BIAS, memory(p.dbias, eng, dbias));
      p.weights.execute(s, args);
      if (dkernel)
        p.from_diff_w.execute(s, {{DNNL_ARG_FROM, dw},
                                  {DNNL_ARG_TO, memory(p.user_w, eng, dkernel)},
                                  {DNNL_ARG_SCRATCHPAD, part[next + 2]}});
    }
    s.wait();
    return true;
  } catch (const dnnl::error& e) {
    *why_not = std::string("oneDNN failed: ") + e.what();
    return false;
  }
}

// The gradients of one call without a plan kept (an op outside a layer): a plan of the backward alone
// made for the call.
bool dnnl_conv_grad(const ConvGeometry& g, const float* x, const float* kernel, const float* dy, float* dx,
                    float* dkernel, float* dbias, std::string* why_not) {
  auto plan = dnnl_conv_train_plan(g, false, false, dx != nullptr, dkernel != nullptr, dbias != nullptr, why_not);
  if (!plan) return false;
  const size_t bytes = (std::max<size_t>(dnnl_train_grad_bytes(*plan), 1) + 63) / 64 * 64;
  std::unique_ptr<void, decltype(&std::free)> work(std::aligned_alloc(64, bytes), &std::free);
  if (!work) throw std::bad_alloc();
  return dnnl_conv_train_grad(*plan, x, kernel, dy, dx, dkernel, dbias, work.get(), why_not);
}

}  // namespace kerascpp::kernels
