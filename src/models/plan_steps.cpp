// The kernels of inference plans (models/inference_plan.h), one per layer class the plan takes: each
// computes what the layer's call() computes, with the same kernels in the same order, on (rows, width)
// blocks the plan owns. A layer is recognised by its own class (layers/plan_parts.h), never by its
// Keras class name alone.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>

#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/normalization.h"
#include "layers/activations/activation_fn.h"
#include "layers/plan_parts.h"
#include "layers/regularization/inference_identity.h"
#include "models/inference_plan.h"

namespace kerascpp::models {
namespace {

int64_t width_of(const Shape& s) { return shape_size(Shape(s.begin() + 1, s.end())); }

// Dense: c = activation(x @ kernel + bias) on the last axis. The matmul is the one the interpreter's
// ops::matmul picks for these sizes, with the bias added (and relu applied) as it stores
// (kernels::matmul_bias); any other activation then runs over the output with the interpreter's kernel.
class DenseStep : public PlanStep {
 public:
  DenseStep(const layers::DenseParts& p, int64_t rows_per_sample)
      : parts_(p),
        kernel_(p.kernel->value().data<float>()),
        bias_(p.bias ? p.bias->value().data<float>() : nullptr),
        k_(p.kernel->shape()[0]),
        n_(p.kernel->shape()[1]),
        rows_per_sample_(rows_per_sample),
        relu_(p.activation->is_relu()) {}
  void run(const float* const* in, float* out, int64_t rows) const override {
    const int64_t m = rows * rows_per_sample_;
    kernels::matmul_bias(in[0], kernel_, bias_, relu_, out, m, n_, k_);
    if (!relu_ && !parts_.activation->is_linear()) parts_.activation->apply(out, out, m * n_, n_);
  }

 private:
  // The variables' storage never moves (Variable::assign copies into it), so their data are read
  // through pointers taken once; parts_ keeps the variables alive.
  layers::DenseParts parts_;
  const float *kernel_, *bias_;
  int64_t k_, n_, rows_per_sample_;
  bool relu_;
};

// Activation: elementwise, or softmax over the last axis; may run in place.
class ActivationStep : public PlanStep {
 public:
  ActivationStep(const layers::ActivationFn& fn, int64_t width, int64_t last) : fn_(fn), width_(width), last_(last) {}
  void run(const float* const* in, float* out, int64_t rows) const override { fn_.apply(in[0], out, rows * width_, last_); }
  bool in_place() const override { return true; }

 private:
  const layers::ActivationFn& fn_;  // the layer's; the model keeps the layer alive
  int64_t width_, last_;
};

// ReLU with max_value, negative_slope and threshold (kernels::relu, as ops::relu); may run in place.
class ReluStep : public PlanStep {
 public:
  ReluStep(const layers::ReluParts& p, int64_t width) : p_(p), width_(width) {}
  void run(const float* const* in, float* out, int64_t rows) const override {
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
  void run(const float* const* in, float* out, int64_t rows) const override {
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

// Concatenate on a sample axis: per outer position (the rows and the axes before `axis`), each
// input's block in turn.
class ConcatenateStep : public PlanStep {
 public:
  ConcatenateStep(std::vector<int64_t> blocks, int64_t outer_per_row)
      : blocks_(std::move(blocks)), outer_per_row_(outer_per_row) {
    for (int64_t b : blocks_) total_ += b;
  }
  void run(const float* const* in, float* out, int64_t rows) const override {
    const int64_t outer = rows * outer_per_row_;
    for (int64_t o = 0; o < outer; ++o)
      for (size_t i = 0; i < blocks_.size(); ++i) {
        if (blocks_[i] > 0) std::memcpy(out, in[i] + o * blocks_[i], static_cast<size_t>(blocks_[i]) * sizeof(float));
        out += blocks_[i];
      }
  }

 private:
  std::vector<int64_t> blocks_;  // floats per outer position, per input
  int64_t outer_per_row_, total_ = 0;
};

// BatchNormalization at inference: y = x * scale + shift per channel, folded from the moving statistics
// with the op's fold (kernels::batch_normalization_fold); the fold is kept until a variable changes
// (Variable::version), and readers on other threads keep the one they took. May run in place.
class BatchNormStep : public PlanStep {
 public:
  BatchNormStep(const layers::BatchNormParts& p, int64_t outer_per_row, int64_t channels, int64_t inner)
      : p_(p), outer_per_row_(outer_per_row), channels_(channels), inner_(inner) {}
  void run(const float* const* in, float* out, int64_t rows) const override {
    std::shared_ptr<const Folded> f = folded_.load(std::memory_order_acquire);
    if (!f || f->versions != versions()) {
      auto fresh = std::make_shared<Folded>();
      fresh->versions = versions();
      fresh->scale.resize(channels_);
      fresh->shift.resize(channels_);
      auto data = [](const VariablePtr& v) { return v ? v->value().data<float>() : nullptr; };
      kernels::batch_normalization_fold(data(p_.mean), data(p_.variance), data(p_.gamma), data(p_.beta), p_.epsilon,
                                        channels_, fresh->scale.data(), fresh->shift.data());
      folded_.store(fresh, std::memory_order_release);
      f = std::move(fresh);
    }
    kernels::batch_normalization(in[0], out, f->scale.data(), f->shift.data(), rows * outer_per_row_, channels_,
                                 inner_);
  }
  bool in_place() const override { return true; }

 private:
  struct Folded {
    std::array<uint64_t, 4> versions;
    std::vector<float> scale, shift;
  };
  std::array<uint64_t, 4> versions() const {
    auto v = [](const VariablePtr& var) { return var ? var->version() : 0; };
    return {v(p_.mean), v(p_.variance), v(p_.gamma), v(p_.beta)};
  }
  layers::BatchNormParts p_;
  int64_t outer_per_row_, channels_, inner_;
  mutable std::atomic<std::shared_ptr<const Folded>> folded_;
};

// The layer's inference output is its input reinterpreted (same floats, same order).
bool is_inference_view(const Layer& layer, const Shape& input) {
  return layers::is_identity_layer(layer) || layers::is_reshape_layer(layer) || layers::flatten_is_view(layer, input) ||
         dynamic_cast<const layers::InferenceIdentity*>(&layer) != nullptr;
}

class ViewStep : public PlanStep {
 public:
  void run(const float* const*, float*, int64_t) const override {}
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
  if (inputs.size() != 1) return refuse("has " + std::to_string(inputs.size()) + " inputs; the plan takes one");
  const Shape& x = inputs[0];
  if (is_inference_view(layer, x)) {
    if (width_of(x) != width_of(output)) return refuse("changes the size of a sample");
    return std::make_unique<ViewStep>();
  }
  layers::DenseParts dense;
  if (layers::dense_parts(layer, &dense)) {
    const int64_t k = dense.kernel->shape()[0];
    if (x.back() != k || width_of(x) % k != 0) return refuse("does not fit its input " + shape_str(x));
    return std::make_unique<DenseStep>(dense, width_of(x) / k);
  }
  if (const layers::ActivationFn* fn = layers::activation_layer_fn(layer))
    return std::make_unique<ActivationStep>(*fn, width_of(x), x.back());
  layers::ReluParts relu;
  if (layers::relu_parts(layer, &relu)) return std::make_unique<ReluStep>(relu, width_of(x));
  layers::BatchNormParts bn;
  if (layers::batch_norm_parts(layer, &bn)) {
    if (bn.axis <= 0 || bn.axis >= static_cast<int>(x.size())) return refuse("normalises the batch axis");
    return std::make_unique<BatchNormStep>(bn, shape_size(Shape(x.begin() + 1, x.begin() + bn.axis)), x[bn.axis],
                                           shape_size(Shape(x.begin() + bn.axis + 1, x.end())));
  }
  return refuse("is not planned");
}

}  // namespace kerascpp::models
