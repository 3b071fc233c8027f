// The kernels of inference plans (models/inference_plan.h), one per layer class the plan takes: each
// computes what the layer's call() computes, with the same kernels in the same order, on (rows, width)
// blocks the plan owns. A layer is recognised by its own class (layers/plan_parts.h), never by its
// Keras class name alone.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>

#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/normalization.h"
#include "layers/activations/activation_fn.h"
#include "layers/plan_parts.h"
#include "layers/regularization/inference_identity.h"
#include "models/inference_plan.h"
#include "models/plan_conv_steps.h"
#include "models/plan_fold.h"
#include "models/plan_recurrent_steps.h"

namespace kerascpp::models {
namespace {

int64_t width_of(const Shape& s) { return shape_size(Shape(s.begin() + 1, s.end())); }

// Dense: c = activation(x @ kernel + bias) on the last axis. The matmul is the one the interpreter's
// ops::matmul picks for these sizes, with the bias added (and relu applied) as it stores
// (kernels::matmul_bias); any other activation then runs over the output with the interpreter's kernel.
// A linear Dense takes in the BatchNormalization over its units after it (folded into a copy of its
// kernel and bias, made again when a variable's version moves) and then a relu (the store's relu).
class DenseStep : public PlanStep {
 public:
  DenseStep(const layers::DenseParts& p, int64_t rows_per_sample, int units_axis)
      : parts_(p),
        kernel_(p.kernel->data<float>()),
        bias_(p.bias ? p.bias->data<float>() : nullptr),
        k_(p.kernel->shape()[0]),
        n_(p.kernel->shape()[1]),
        rows_per_sample_(rows_per_sample),
        units_axis_(units_axis),
        relu_(p.activation->is_relu()) {}
  void run(const float* const* in, float* out, int64_t rows, float*) const override {
    const int64_t m = rows * rows_per_sample_;
    if (bn_) {
      const std::shared_ptr<const FoldedWeights> f = folded();
      kernels::matmul_bias(in[0], f->kernel.data(), f->bias.data(), relu_, out, m, n_, k_);
      return;
    }
    kernels::matmul_bias(in[0], kernel_, bias_, relu_, out, m, n_, k_);
    if (!relu_ && !parts_.activation->is_linear()) parts_.activation->apply(out, out, m * n_, n_);
  }
  bool exact() const override { return !bn_ && !absorbed_relu_; }

  bool absorb(const Layer& next) override {
    if (!parts_.activation->is_linear() || relu_) return false;
    layers::BatchNormParts bn;
    if (layers::batch_norm_parts(next, &bn)) {
      if (bn_ || bn.axis != units_axis_ || bn.mean->shape().size() != 1 || bn.mean->shape()[0] != n_) return false;
      bn_ = bn;
      return true;
    }
    layers::ReluParts r;
    const layers::ActivationFn* fn = layers::activation_layer_fn(next);
    const bool plain_relu = layers::relu_parts(next, &r) && r.negative_slope == 0.f && r.threshold == 0.f &&
                            r.max_value == std::numeric_limits<float>::infinity();
    if (!plain_relu && !(fn && fn->is_relu())) return false;
    relu_ = absorbed_relu_ = true;
    return true;
  }

 private:
  std::shared_ptr<const FoldedWeights> folded() const {
    const uint64_t v = folded_version(parts_.kernel, parts_.bias, bn_);
    {
      std::lock_guard<std::mutex> lock(folded_mu_);
      if (folded_ && folded_->version == v) return folded_;
    }
    // Outside the lock: other callers keep running meanwhile.
    std::shared_ptr<const FoldedWeights> f = fold_weights(parts_.kernel, parts_.bias, bn_, 1.f, n_);
    std::lock_guard<std::mutex> lock(folded_mu_);
    folded_ = f;
    return f;
  }

  // The variables' storage never moves once the model is in use (Variable::assign copies into it; a
  // load that shares weights with the file rebuilds the plan), so their data are read through
  // pointers taken once; parts_ keeps the variables alive.
  layers::DenseParts parts_;
  const float *kernel_, *bias_;
  int64_t k_, n_, rows_per_sample_;
  int units_axis_;
  bool relu_, absorbed_relu_ = false;
  std::optional<layers::BatchNormParts> bn_;
  mutable std::mutex folded_mu_;
  mutable std::shared_ptr<const FoldedWeights> folded_;
};

// Activation: elementwise, or softmax over the last axis; may run in place.
class ActivationStep : public PlanStep {
 public:
  ActivationStep(const layers::ActivationFn& fn, int64_t width, int64_t last) : fn_(fn), width_(width), last_(last) {}
  void run(const float* const* in, float* out, int64_t rows, float*) const override { fn_.apply(in[0], out, rows * width_, last_); }
  bool in_place() const override { return true; }

 private:
  const layers::ActivationFn& fn_;  // the layer's; the model keeps the layer alive
  int64_t width_, last_;
};

// ReLU with max_value, negative_slope and threshold (kernels::relu, as ops::relu); may run in place.
class ReluStep : public PlanStep {
 public:
  ReluStep(const layers::ReluParts& p, int64_t width) : p_(p), width_(width) {}
  void run(const float* const* in, float* out, int64_t rows, float*) const override {
    kernels::relu(in[0], out, rows * width_, p_.negative_slope, p_.max_value, p_.threshold);
  }
  bool in_place() const override { return true; }

 private:
  layers::ReluParts p_;
  int64_t width_;
};

// Add, Subtract, Multiply, Maximum, Minimum, Average of inputs of one shape: folded pairwise in order
// (BaseMerge::merge), Average then scaled by 1 / count (kernels::scale_shift, as ops::scale_shift).
class MergeStep : public PlanStep {
 public:
  MergeStep(const layers::MergeParts& p, size_t inputs, int64_t width) : p_(p), inputs_(inputs), width_(width) {}
  void run(const float* const* in, float* out, int64_t rows, float*) const override {
    const int64_t n[] = {rows * width_}, unit[] = {1};
    kernels::binary(p_.op, in[0], unit, in[1], unit, out, n, 1);
    for (size_t i = 2; i < inputs_; ++i) kernels::binary(p_.op, out, unit, in[i], unit, out, n, 1);
    if (p_.average) kernels::scale_shift(out, out, n[0], 1.f / static_cast<float>(inputs_), 0.f);
  }
  bool in_place() const override { return true; }

 private:
  layers::MergeParts p_;
  size_t inputs_;
  int64_t width_;
};

// keras.applications' CustomScaleLayer, shortcut + residual * scale: the residual scaled into the
// scratch (kernels::scale_shift, as ops::scale_shift), then added (as ops::binary); may run in place.
class ScaledAddStep : public PlanStep {
 public:
  ScaledAddStep(float scale, int64_t width) : scale_(scale), width_(width) {}
  void run(const float* const* in, float* out, int64_t rows, float* scratch) const override {
    const int64_t n[] = {rows * width_}, unit[] = {1};
    kernels::scale_shift(in[1], scratch, n[0], scale_, 0.f);
    kernels::binary(kernels::Binary::add, in[0], unit, scratch, unit, out, n, 1);
  }
  int64_t scratch_floats(int64_t rows) const override { return rows * width_; }
  bool in_place() const override { return true; }

 private:
  float scale_;
  int64_t width_;
};

// Concatenate on a sample axis: per outer position (the rows and the axes before `axis`), each
// input's block in turn.
class ConcatenateStep : public PlanStep {
 public:
  ConcatenateStep(std::vector<int64_t> blocks, int64_t outer_per_row)
      : blocks_(std::move(blocks)), outer_per_row_(outer_per_row) {}
  void run(const float* const* in, float* out, int64_t rows, float*) const override {
    const int64_t outer = rows * outer_per_row_;
    for (int64_t o = 0; o < outer; ++o)
      for (size_t i = 0; i < blocks_.size(); ++i) {
        if (blocks_[i] > 0) std::memcpy(out, in[i] + o * blocks_[i], static_cast<size_t>(blocks_[i]) * sizeof(float));
        out += blocks_[i];
      }
  }

 private:
  std::vector<int64_t> blocks_;  // floats per outer position, per input
  int64_t outer_per_row_;
};

// BatchNormalization at inference: y = x * scale + shift per channel, folded from the moving statistics
// at every call (channels floats: nothing next to the batch) with the op's fold
// (kernels::batch_normalization_fold), into the caller's scratch, so that statistics written in place
// are seen as the interpreter sees them. May run in place.
class BatchNormStep : public PlanStep {
 public:
  BatchNormStep(const layers::BatchNormParts& p, int64_t outer_per_row, int64_t channels, int64_t inner)
      : p_(p),
        mean_(p.mean->data<float>()),
        variance_(p.variance->data<float>()),
        gamma_(p.gamma ? p.gamma->data<float>() : nullptr),
        beta_(p.beta ? p.beta->data<float>() : nullptr),
        outer_per_row_(outer_per_row),
        channels_(channels),
        inner_(inner) {}
  void run(const float* const* in, float* out, int64_t rows, float* scratch) const override {
    float *scale = scratch, *shift = scratch + channels_;
    kernels::batch_normalization_fold(mean_, variance_, gamma_, beta_, p_.epsilon, channels_, scale, shift);
    kernels::batch_normalization(in[0], out, scale, shift, rows * outer_per_row_, channels_, inner_);
  }
  int64_t scratch_floats(int64_t) const override { return 2 * channels_; }
  bool in_place() const override { return true; }

 private:
  layers::BatchNormParts p_;  // keeps the variables (whose storage never moves) alive
  const float *mean_, *variance_, *gamma_, *beta_;
  int64_t outer_per_row_, channels_, inner_;
};

// LayerNormalization over a block of adjacent sample axes (ops::layer_normalization's untransposed case).
class LayerNormStep : public PlanStep {
 public:
  LayerNormStep(const layers::LayerNormParts& p, int64_t outer_per_row, int64_t n, int64_t inner)
      : p_(p),
        gamma_(p.gamma ? p.gamma->data<float>() : nullptr),
        beta_(p.beta ? p.beta->data<float>() : nullptr),
        outer_per_row_(outer_per_row),
        n_(n),
        inner_(inner) {}
  void run(const float* const* in, float* out, int64_t rows, float*) const override {
    kernels::layer_normalization(in[0], out, gamma_, beta_, rows * outer_per_row_, n_, inner_, p_.epsilon,
                                 p_.rms_scaling);
  }

 private:
  layers::LayerNormParts p_;  // keeps the variables alive
  const float *gamma_, *beta_;
  int64_t outer_per_row_, n_, inner_;
};

// The layer's inference output is its input reinterpreted (same floats, same order).
bool is_inference_view(const Layer& layer, const Shape& input, const Shape& output) {
  if (layers::is_identity_layer(layer) || layers::is_reshape_layer(layer) || layers::flatten_is_view(layer, input))
    return true;
  const auto* identity = dynamic_cast<const layers::InferenceIdentity*>(&layer);
  return identity && identity->identity_at_inference() && input == output;
}

class ViewStep : public PlanStep {
 public:
  void run(const float* const*, float*, int64_t, float*) const override {}
  bool is_view() const override { return true; }
};

}  // namespace

std::unique_ptr<PlanStep> make_plan_step(const Layer& layer, const std::vector<Shape>& inputs, const Shape& output,
                                         std::string* why) {
  auto refuse = [&](const std::string& reason) -> std::unique_ptr<PlanStep> {
    *why = "layer '" + layer.name() + "' (" + layer.class_name() + ") " + reason;
    return nullptr;
  };
  if (inputs.empty()) return refuse("has no inputs");
  layers::MergeParts merge;
  if (layers::merge_parts(layer, &merge)) {
    for (const Shape& s : inputs)
      if (s != output) return refuse("broadcasts its inputs " + shape_str(s) + " to " + shape_str(output));
    if (inputs.size() < 2) return refuse("has fewer than two inputs");
    return std::make_unique<MergeStep>(merge, inputs.size(), width_of(output));
  }
  int axis = 0;
  if (layers::concatenate_axis(layer, &axis)) {
    const int rank = static_cast<int>(output.size());
    if (axis < 0) axis += rank;
    if (axis <= 0 || axis >= rank) return refuse("joins its inputs on the batch axis");
    std::vector<int64_t> blocks;
    for (const Shape& s : inputs) blocks.push_back(shape_size(Shape(s.begin() + axis, s.end())));
    return std::make_unique<ConcatenateStep>(std::move(blocks), shape_size(Shape(output.begin() + 1, output.begin() + axis)));
  }
  float scale = 0.f;
  if (layers::custom_scale_parts(layer, &scale)) {
    if (inputs.size() != 2 || inputs[0] != output || inputs[1] != output)
      return refuse("broadcasts its inputs to " + shape_str(output));
    return std::make_unique<ScaledAddStep>(scale, width_of(output));
  }
  if (inputs.size() != 1) return refuse("has " + std::to_string(inputs.size()) + " inputs; the plan takes one");
  const Shape& x = inputs[0];
  why->clear();
  if (auto spatial = make_spatial_plan_step(layer, x, output, why)) return spatial;
  if (!why->empty()) return nullptr;
  if (auto recurrent = make_recurrent_plan_step(layer, x, output, why)) return recurrent;
  if (!why->empty()) return nullptr;
  if (is_inference_view(layer, x, output)) {
    if (width_of(x) != width_of(output)) return refuse("changes the size of a sample");
    return std::make_unique<ViewStep>();
  }
  layers::DenseParts dense;
  if (layers::dense_parts(layer, &dense)) {
    const int64_t k = dense.kernel->shape()[0];
    if (x.back() != k || width_of(x) % k != 0) return refuse("does not fit its input " + shape_str(x));
    return std::make_unique<DenseStep>(dense, width_of(x) / k, static_cast<int>(output.size()) - 1);
  }
  if (const layers::ActivationFn* fn = layers::activation_layer_fn(layer))
    return std::make_unique<ActivationStep>(*fn, width_of(x), x.back());
  layers::ReluParts relu;
  if (layers::relu_parts(layer, &relu)) {
    if (std::isnan(relu.max_value) || std::isnan(relu.negative_slope) || std::isnan(relu.threshold))
      return refuse("has a NaN argument (ops::relu refuses it when called)");
    return std::make_unique<ReluStep>(relu, width_of(x));
  }
  layers::LayerNormParts ln;
  if (layers::layer_norm_parts(layer, &ln)) {
    const std::vector<int>& a = ln.axes;
    if (a.empty() || a.front() <= 0 || a.back() >= static_cast<int>(x.size()) ||
        a.back() - a.front() + 1 != static_cast<int>(a.size()))
      return refuse("normalises over axes that are not one block of sample axes");
    return std::make_unique<LayerNormStep>(ln, shape_size(Shape(x.begin() + 1, x.begin() + a.front())),
                                           shape_size(Shape(x.begin() + a.front(), x.begin() + a.back() + 1)),
                                           shape_size(Shape(x.begin() + a.back() + 1, x.end())));
  }
  layers::BatchNormParts bn;
  if (layers::batch_norm_parts(layer, &bn)) {
    if (bn.axis <= 0 || bn.axis >= static_cast<int>(x.size())) return refuse("normalises the batch axis");
    return std::make_unique<BatchNormStep>(bn, shape_size(Shape(x.begin() + 1, x.begin() + bn.axis)), x[bn.axis],
                                           shape_size(Shape(x.begin() + bn.axis + 1, x.end())));
  }
  return refuse("is not planned");
}

}  // namespace kerascpp::models
