// Convolution, transposed convolution and pooling kernels over 1 to 3 spatial dims.
//
// The geometry is always written as 3 spatial dims (d, h, w); a 1D or 2D op sets the leading ones to
// 1. Tensors keep Keras's layouts, so no op transposes anything:
//   x, y:   channels_last (n, d, h, w, c) or channels_first (n, c, d, h, w)
//   conv kernel:           (kd, kh, kw, ic / groups, oc)   Keras Conv*D, and depthwise as groups = ic
//   transposed kernel:     (kd, kh, kw, oc, ic)            Keras Conv*DTranspose
//
// Two implementations: the scalar reference ref::conv / ref::pool (obviously correct, any geometry), and oneDNN
// (kernels/dnnl_*.cpp), whose plans are made once per shape by the op layer and owned by the layer
// that uses them (see ops::PlanCache). Plans and kernels never validate: ops do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kerascpp::kernels {

struct ConvGeometry {
  int spatial = 2;             // 1, 2 or 3: how many of d, h, w are real (for oneDNN's tags)
  bool channels_first = false;
  bool transpose = false;      // Conv*DTranspose: y = the adjoint of the convolution y -> x
  int64_t n = 1, ic = 1, oc = 1, groups = 1;
  int64_t in[3] = {1, 1, 1};   // d, h, w of x
  int64_t out[3] = {1, 1, 1};  // d, h, w of y
  int64_t k[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  // Zero padding before and after, on x for a convolution and on y for a transposed one (the
  // padding of the convolution it is the adjoint of). pad_r may be negative for a transposed
  // convolution with output_padding: the extra outputs then see no padding at all.
  int64_t pad_l[3] = {0, 0, 0};
  int64_t pad_r[3] = {0, 0, 0};
};

enum class PoolKind { max, average };

struct PoolGeometry {
  int spatial = 2;
  bool channels_first = false;
  PoolKind kind = PoolKind::max;
  int64_t n = 1, c = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t k[3] = {1, 1, 1}, stride[3] = {1, 1, 1};
  int64_t pad_l[3] = {0, 0, 0}, pad_r[3] = {0, 0, 0};  // padded cells never count (TensorFlow's rule)
};

// ---- oneDNN plans (dnnl_conv.cpp). A plan holds the primitive and the weights re-laid-out the way
// the primitive wants them; running it from several threads at once is safe (each call brings its
// own scratch memory).
class DnnlConvPlan;
class DnnlPoolPlan;
// What an inference plan runs inside a convolution after its bias (oneDNN post-ops), in order: a sum
// adds what y holds before the call (a residual Add); a clip bounds each value to [lo, hi] (relu is
// [0, inf), relu6 [0, 6]).
struct ConvPostOp {
  bool sum = false;
  float lo = 0.f, hi = 0.f;
};
// nullptr and *why_not set when oneDNN cannot do this geometry (the caller falls back to ref).
std::shared_ptr<const DnnlConvPlan> dnnl_conv_plan(const ConvGeometry& g, const float* kernel,
                                                   const float* bias, std::string* why_not,
                                                   const std::vector<ConvPostOp>& post_ops = {});
size_t dnnl_scratch_bytes(const DnnlConvPlan& p);
void dnnl_conv_run(const DnnlConvPlan& p, const float* x, float* y, void* scratch);

// Gradients of a convolution (or transposed one) for dy: dx, dkernel (Keras layout), dbias, each
// skipped when null. False and *why_not when oneDNN refuses the geometry.
bool dnnl_conv_grad(const ConvGeometry& g, const float* x, const float* kernel, const float* dy, float* dx,
                    float* dkernel, float* dbias, std::string* why_not);
// A convolution that a training step runs and differentiates: its primitives made once per geometry,
// the kernel (Keras layout) given at each call. forward: the plan runs the forward too; bias: the
// forward has one; dx, dweights, dbias: the gradients its backward computes. A call writes only what
// the plan was made for: false with *why_not for other arguments, or when oneDNN fails at run time
// (the caller then runs the reference). `work`: the call's buffer of dnnl_train_*_bytes (64-byte
// aligned), so one plan runs on several threads at once. The plan keeps the thread count it was made
// with.
class DnnlConvTrainPlan;
std::shared_ptr<const DnnlConvTrainPlan> dnnl_conv_train_plan(const ConvGeometry& g, bool forward, bool bias,
                                                               bool dx, bool dweights, bool dbias,
                                                               std::string* why_not);
size_t dnnl_train_forward_bytes(const DnnlConvTrainPlan& p);
size_t dnnl_train_grad_bytes(const DnnlConvTrainPlan& p);
bool dnnl_conv_train_forward(const DnnlConvTrainPlan& p, const float* x, const float* kernel, const float* bias,
                             float* y, void* work, std::string* why_not);
bool dnnl_conv_train_grad(const DnnlConvTrainPlan& p, const float* x, const float* kernel, const float* dy, float* dx,
                          float* dkernel, float* dbias, void* work, std::string* why_not);
std::shared_ptr<const DnnlPoolPlan> dnnl_pool_plan(const PoolGeometry& g, std::string* why_not);
// dx of pooling for dy (overwritten): ref::pool_grad's bits, channels_last in contiguous channel loops.
void pool_grad(const PoolGeometry& g, const float* x, const float* dy, float* dx);
size_t dnnl_scratch_bytes(const DnnlPoolPlan& p);
void dnnl_pool_run(const DnnlPoolPlan& p, const float* x, float* y, void* scratch);

}  // namespace kerascpp::kernels
