// The kernels of inference plans (models/inference_plan.h), one per layer class the plan takes: each
// computes what the layer's call() computes, with the same kernels in the same order, on (rows, width)
// blocks the plan owns. A layer is recognised by its own class (layers/plan_parts.h), never by its
// Keras class name alone.
#include <algorithm>

#include "kernels/matmul.h"
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
  return refuse("is not planned");
}

}  // namespace kerascpp::models
