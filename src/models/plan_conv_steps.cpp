// Convolution, pooling and zero-padding steps of inference plans (models/plan_conv_steps.h).
//
// oneDNN's primitives are made for one batch size, so each step keeps the ones it made, per number
// of rows (and weights version), as the layers' PlanCache does for the interpreter. A convolution
// step can take in the layers that follow it while the plan is made (absorb): a BatchNormalization is
// folded into its kernel and bias, an Add of an earlier value runs as oneDNN's sum post-op, a relu
// (ReLU, Activation("relu"), relu6) as a clip post-op, and InceptionResNetV2's CustomScaleLayer as its
// scale folded into the weights and a sum post-op; results then move by round-off (exact() false).
// A ZeroPadding that only a convolution (or a MaxPooling with padding "valid") reads merges with it
// (merge_next): that layer adds the zeros itself, and the padded copy (MobileNetV2: 7.7 MB per image,
// 9% of its batch-1 call) is never made.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>

#include "kernels/conv.h"
#include "kernels/dispatch_log.h"
#include "kernels/normalization.h"
#include "kernels/pad_slice.h"
#include "kernels/reduce_axes.h"
#include "kernels/ref/ref.h"
#include "layers/activations/activation_fn.h"
#include "layers/plan_parts.h"
#include "ops/conv_geometry.h"
#include "models/plan_conv_steps.h"
#include "models/plan_fold.h"

namespace kerascpp::models {
namespace {

int64_t width_of(const Shape& s) { return shape_size(Shape(s.begin() + 1, s.end())); }

// What a step made for one number of rows, kept for the next calls of that size (at most kKeep,
// the latest). Safe to use from concurrent calls: two racing to make one both keep theirs.
template <typename Entry>
class PerRows {
 public:
  static constexpr size_t kKeep = 8;
  template <typename Make>
  std::shared_ptr<const Entry> get(int64_t rows, uint64_t version, Make make) const {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const Kept& k : kept_)
        if (k.rows == rows && k.version == version) return k.entry;
    }
    std::shared_ptr<const Entry> made = make();
    std::lock_guard<std::mutex> lock(mu_);
    kept_.push_back({rows, version, made});
    if (kept_.size() > kKeep) kept_.pop_front();
    return made;
  }

 private:
  struct Kept {
    int64_t rows;
    uint64_t version;
    std::shared_ptr<const Entry> entry;
  };
  mutable std::mutex mu_;
  mutable std::deque<Kept> kept_;
};

using Pads = std::vector<std::pair<int64_t, int64_t>>;  // zeros before and after, per axis

// The step's input for the dispatch log: x (as the layer sees it) less the padding the step adds itself.
std::string geometry_str(const Shape& x, int64_t rows, const Pads& padding = {}) {
  Shape s = x;
  s[0] = rows;
  std::string pads;
  for (size_t a = 1; a < padding.size(); ++a) {
    s[a] -= padding[a].first + padding[a].second;
    pads += (a > 1 ? ", (" : "(") + std::to_string(padding[a].first) + ", " +
            std::to_string(padding[a].second) + ")";
  }
  return "x=" + shape_str(s) + (padding.empty() ? "" : " zero_padding=(" + pads + ")");
}

// Turns a convolution's or pooling's geometry for a padded input (`padding` per axis of it, on spatial
// axes only) into the geometry for the input without it: the kernel's own zero padding adds the zeros.
template <typename Geometry>
void unpad(Geometry& g, const Pads& padding, bool channels_first) {
  if (padding.empty()) return;
  for (int i = 0; i < g.spatial; ++i) {
    const auto& [before, after] = padding[(channels_first ? 2 : 1) + i];
    const int d = 3 - g.spatial + i;
    g.in[d] -= before + after;
    g.pad_l[d] += before;
    g.pad_r[d] += after;
  }
}

// A convolution (Conv1D-3D, DepthwiseConv1D/2D) with its bias, then what it absorbed, in order. x: the
// input as the layer sees it; `padding`: the zeros a ZeroPadding before it added to x (per axis of x,
// on spatial axes only), which the step's input lacks and the convolution adds itself.
class ConvStep : public PlanStep {
 public:
  ConvStep(const layers::ConvParts& p, const Shape& x, const Shape& y, Pads padding = {})
      : parts_(p),
        x_(x),
        padding_(std::move(padding)),
        out_width_(width_of(y)),
        channels_(p.options.channels_first ? y[1] : y.back()),
        last_(y.back()),
        channel_axis_(p.options.channels_first ? 1 : static_cast<int>(y.size()) - 1) {
    if (p.activation->is_relu())
      post_.push_back({false, 0.f, std::numeric_limits<float>::infinity()});
    else if (!p.activation->is_linear())
      after_ = p.activation;
  }

  void run(const float* const* in, float* out, int64_t rows, float* scratch) const override {
    const float* x = in[sum_ ? 1 : 0];
    const size_t n = static_cast<size_t>(rows * out_width_);
    if (sum_ && out != in[0]) std::memcpy(out, in[0], n * sizeof(float));
    const std::shared_ptr<const Prepared> p = prepared(rows);
    if (p->dnnl) {
      kernels::dnnl_conv_run(*p->dnnl, x, out, scratch);
    } else {  // oneDNN refused: the reference kernel into a buffer of its own (allocated per call on this
              // slow fallback, so that the scratch never depends on which path a rebuilt entry takes)
      std::vector<float> y(n);
      kernels::ref::conv(p->g, x, p->kernel_data(parts_), p->bias_data(parts_), y.data());
      for (const PostOp& op : post_) {
        if (op.sum)
          for (size_t i = 0; i < n; ++i) y[i] += out[i];
        else
          for (size_t i = 0; i < n; ++i) y[i] = std::min(std::max(y[i], op.lo), op.hi);
      }
      std::memcpy(out, y.data(), n * sizeof(float));
    }
    if (after_) after_->apply(out, out, static_cast<int64_t>(n), last_);
  }
  // oneDNN's scratchpad, which depends on the geometry and post-ops only (the same for every version).
  int64_t scratch_floats(int64_t rows) const override {
    const std::shared_ptr<const Prepared> p = prepared(rows);
    return p->dnnl ? static_cast<int64_t>((kernels::dnnl_scratch_bytes(*p->dnnl) + 3) / 4) : 0;
  }
  bool in_place() const override { return sum_; }
  // A padded input the kernel never reads may take oneDNN to another algorithm for the same sums.
  bool exact() const override { return !folds() && post_.empty() && padding_.empty(); }

  bool absorb(const Layer& next) override {
    if (after_) return false;
    layers::BatchNormParts bn;
    if (layers::batch_norm_parts(next, &bn)) {
      if (bn_ || !post_.empty() || bn.axis != channel_axis_ || bn.mean->shape().size() != 1 ||
          bn.mean->shape()[0] != channels_)
        return false;
      bn_ = bn;
      return true;
    }
    layers::ReluParts relu;
    if (layers::relu_parts(next, &relu)) {
      if (relu.negative_slope != 0.f || relu.threshold != 0.f || !(relu.max_value >= 0.f)) return false;
      post_.push_back({false, 0.f, relu.max_value});
      return true;
    }
    const layers::ActivationFn* fn = layers::activation_layer_fn(next);
    if (fn && fn->is_relu()) {
      post_.push_back({false, 0.f, std::numeric_limits<float>::infinity()});
      return true;
    }
    return false;
  }
  // The scale goes into the weights (as a BatchNormalization's does), the sum into a post-op.
  bool absorb_add(float scale) override {
    if (after_ || sum_ || !post_.empty() || !std::isfinite(scale)) return false;
    sum_ = true;
    out_scale_ = scale;
    post_.push_back({true, 0.f, 0.f});
    return true;
  }

 private:
  struct PostOp {
    bool sum;  // else clip to [lo, hi]
    float lo, hi;
  };
  // oneDNN's primitive for one number of rows (it keeps its own copy of the weights), or the geometry
  // and the weights for the reference kernel where oneDNN refused.
  struct Prepared {
    kernels::ConvGeometry g;
    std::shared_ptr<const kernels::DnnlConvPlan> dnnl;
    std::shared_ptr<const FoldedWeights> folded;  // kept for the reference kernel only; null: the variables'
    const float* kernel_data(const layers::ConvParts& p) const {
      return folded ? folded->kernel.data() : p.kernel->data<float>();
    }
    const float* bias_data(const layers::ConvParts& p) const {
      if (folded) return folded->bias.data();
      return p.bias ? p.bias->data<float>() : nullptr;
    }
  };

  bool folds() const { return bn_ || out_scale_ != 1.f; }

  std::shared_ptr<const Prepared> prepared(int64_t rows) const {
    return made_.get(rows, folded_version(parts_.kernel, parts_.bias, bn_), [&] {
      auto p = std::make_shared<Prepared>();
      p->g = ops::conv_geometry(x_, parts_.kernel_shape, parts_.options, rows);
      unpad(p->g, padding_, parts_.options.channels_first);
      if (folds()) p->folded = fold_weights(parts_.kernel, parts_.bias, bn_, out_scale_, channels_);
      std::vector<kernels::ConvPostOp> ops;
      for (const PostOp& op : post_) ops.push_back({op.sum, op.lo, op.hi});
      std::string why_not;
      p->dnnl = kernels::dnnl_conv_plan(p->g, p->kernel_data(parts_), p->bias_data(parts_), &why_not, ops);
      if (p->dnnl) p->folded.reset();
      if (kernels::dispatch_verbose())
        kernels::log_dispatch("plan_conv", geometry_str(x_, rows, padding_), p->dnnl ? "onednn" : "ref",
                              why_not);
      return std::shared_ptr<const Prepared>(std::move(p));
    });
  }

  layers::ConvParts parts_;
  Shape x_;
  Pads padding_;
  int64_t out_width_, channels_, last_;
  int channel_axis_;
  std::optional<layers::BatchNormParts> bn_;
  std::vector<PostOp> post_;
  bool sum_ = false;
  float out_scale_ = 1.f;  // a CustomScaleLayer's scale on the output, before the sum
  const layers::ActivationFn* after_ = nullptr;  // an activation oneDNN does not run, over the output
  PerRows<Prepared> made_;
};

// Max- and AveragePooling (ops::pool's kernels). x: the input as the layer sees it; `padding`: for a
// MaxPooling with padding "valid", the zeros a ZeroPadding before it added to x (per axis of x, on
// spatial axes only), which the step's input lacks. The kernels never count padded cells, but Keras
// pads and then pools, so the zeros count: an output whose window overlaps them is raised to 0 after.
class PoolStep : public PlanStep {
 public:
  PoolStep(const layers::PoolParts& p, const Shape& x, const Pads& padding = {})
      : p_(p), x_(x), padding_(padding) {
    if (padding_.empty()) return;
    kernels::PoolGeometry g = geometry(1);
    for (int d = 0; d < 3; ++d)
      for (int64_t o = 0; o < g.out[d]; ++o) {
        const int64_t start = o * g.stride[d] - g.pad_l[d];
        overlaps_[d].push_back(start < 0 || start + g.k[d] > g.in[d]);
      }
  }
  void run(const float* const* in, float* out, int64_t rows, float* scratch) const override {
    const std::shared_ptr<const Prepared> p = prepared(rows);
    if (p->dnnl)
      kernels::dnnl_pool_run(*p->dnnl, in[0], out, scratch);
    else
      kernels::ref::pool(p->g, in[0], out);
    if (!padding_.empty()) raise_to_zero(p->g, out);
  }
  int64_t scratch_floats(int64_t rows) const override {
    const std::shared_ptr<const Prepared> p = prepared(rows);
    return p->dnnl ? static_cast<int64_t>((kernels::dnnl_scratch_bytes(*p->dnnl) + 3) / 4) : 0;
  }
  // The maximum is exact, but a NaN or -0 in a window may come out otherwise than from the padded copy.
  bool exact() const override { return padding_.empty(); }

 private:
  kernels::PoolGeometry geometry(int64_t rows) const {
    kernels::PoolGeometry g =
        ops::pool_geometry(x_, p_.mode, p_.pool_size, p_.strides, p_.padding, p_.channels_first, rows);
    unpad(g, padding_, p_.channels_first);
    return g;
  }
  // Each output whose window overlaps the padding: max(its value, 0), a NaN kept.
  void raise_to_zero(const kernels::PoolGeometry& g, float* out) const {
    const int64_t c = g.c, inner = p_.channels_first ? 1 : c, planes = p_.channels_first ? g.n * c : g.n;
    float* y = out;
    for (int64_t plane = 0; plane < planes; ++plane)
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow, y += inner)
            if (overlaps_[0][od] || overlaps_[1][oh] || overlaps_[2][ow])
              for (int64_t j = 0; j < inner; ++j) y[j] = y[j] < 0.f ? 0.f : y[j];
  }

  struct Prepared {
    kernels::PoolGeometry g;
    std::shared_ptr<const kernels::DnnlPoolPlan> dnnl;
  };
  std::shared_ptr<const Prepared> prepared(int64_t rows) const {
    return made_.get(rows, 0, [&] {
      auto p = std::make_shared<Prepared>();
      p->g = geometry(rows);
      std::string why_not;
      p->dnnl = kernels::dnnl_pool_plan(p->g, &why_not);
      if (kernels::dispatch_verbose())
        kernels::log_dispatch("plan_pool", geometry_str(x_, rows, padding_), p->dnnl ? "onednn" : "ref",
                              why_not);
      return std::shared_ptr<const Prepared>(std::move(p));
    });
  }
  layers::PoolParts p_;
  Shape x_;
  Pads padding_;
  std::vector<bool> overlaps_[3];  // per output index along d, h, w: whether its window overlaps padding_
  PerRows<Prepared> made_;
};

// GlobalMax- / GlobalAveragePooling: the max or mean over the spatial dims (ops::reduce_max /
// reduce_mean merge them into one axis, as here).
class GlobalPoolStep : public PlanStep {
 public:
  GlobalPoolStep(bool max, int64_t outer_per_row, int64_t axis, int64_t inner)
      : max_(max), outer_per_row_(outer_per_row), axis_(axis), inner_(inner) {}
  void run(const float* const* in, float* out, int64_t rows, float*) const override {
    (max_ ? kernels::reduce_max : kernels::reduce_mean)(in[0], out, rows * outer_per_row_, axis_, inner_);
  }

 private:
  bool max_;
  int64_t outer_per_row_, axis_, inner_;
};

// ZeroPadding (ops::pad's kernel), or, followed by a convolution or a MaxPooling with padding "valid",
// that layer padding its input itself (merge_next).
class PadStep : public PlanStep {
 public:
  static constexpr size_t kMaxRank = 5;  // ZeroPadding3D's input
  PadStep(const Shape& x, const Pads& pads) : shape_(x) {
    for (const auto& [b, a] : pads) before_.push_back(b), after_.push_back(a);
  }
  std::unique_ptr<PlanStep> merge_next(const Layer& next, const Shape& output) const override {
    const size_t rank = shape_.size();
    Shape padded = shape_;
    Pads pads(rank);
    for (size_t a = 0; a < rank; ++a) {
      pads[a] = {before_[a], after_[a]};
      if (a > 0) padded[a] += before_[a] + after_[a];
    }
    // Whether the padding is on the spatial axes alone of a layer with this data format.
    auto spatial_only = [&](bool channels_first) {
      const size_t first = channels_first ? 2 : 1;
      for (size_t a = 0; a < rank; ++a)
        if ((a < first || a >= first + rank - 2) && (before_[a] != 0 || after_[a] != 0)) return false;
      return true;
    };
    layers::ConvParts conv;
    if (layers::conv_parts(next, padded, &conv) && conv.kernel_shape.size() == rank &&
        spatial_only(conv.options.channels_first))
      return std::make_unique<ConvStep>(conv, padded, output, pads);
    layers::PoolParts pool;  // ResNet's pool1_pad and pool1_pool
    if (layers::pool_parts(next, &pool) && pool.mode == ops::PoolMode::max &&
        pool.padding == ops::Padding::valid && pool.pool_size.size() + 2 == rank &&
        spatial_only(pool.channels_first))
      return std::make_unique<PoolStep>(pool, padded, pads);
    return nullptr;
  }
  void run(const float* const* in, float* out, int64_t rows, float*) const override {
    int64_t shape[kMaxRank];
    std::copy(shape_.begin(), shape_.end(), shape);
    shape[0] = rows;
    const float zero = 0.f;
    kernels::pad(in[0], out, sizeof(float), shape, before_.data(), after_.data(), static_cast<int>(shape_.size()), &zero);
  }

 private:
  Shape shape_;
  std::vector<int64_t> before_, after_;
};

}  // namespace

std::unique_ptr<PlanStep> make_spatial_plan_step(const Layer& layer, const Shape& x, const Shape& output,
                                                 std::string* why) {
  auto refuse = [&](const std::string& reason) -> std::unique_ptr<PlanStep> {
    *why = "layer '" + layer.name() + "' (" + layer.class_name() + ") " + reason;
    return nullptr;
  };
  const int rank = static_cast<int>(x.size());
  layers::ConvParts conv;
  if (layers::conv_parts(layer, x, &conv)) {
    if (rank != static_cast<int>(conv.kernel_shape.size())) return refuse("does not fit its input " + shape_str(x));
    return std::make_unique<ConvStep>(conv, x, output);
  }
  layers::PoolParts pool;
  if (layers::pool_parts(layer, &pool)) {
    if (rank != static_cast<int>(pool.pool_size.size()) + 2) return refuse("does not fit its input " + shape_str(x));
    return std::make_unique<PoolStep>(pool, x);
  }
  layers::GlobalPoolParts global;
  if (layers::global_pool_parts(layer, &global)) {
    if (rank < 3) return refuse("has no spatial axes in its input " + shape_str(x));
    const int64_t c = global.channels_first ? x[1] : x.back();
    const int64_t spatial = width_of(x) / std::max<int64_t>(c, 1);
    return std::make_unique<GlobalPoolStep>(global.max, global.channels_first ? c : 1, spatial,
                                            global.channels_first ? 1 : c);
  }
  Pads pads;
  if (layers::zero_padding_parts(layer, rank, &pads)) {
    if (x.size() > PadStep::kMaxRank) return refuse("has an input of rank above 5");
    return std::make_unique<PadStep>(x, pads);
  }
  return nullptr;
}

}  // namespace kerascpp::models
