// keras.layers.Embedding (keras/src/layers/core/embedding.py): rows of `embeddings` (input_dim,
// output_dim) picked by integer indices; (batch, ...) -> (batch, ..., output_dim). With mask_zero the
// output is masked where the index is 0 (and the layer supports masking, as Keras sets it).
// Keras 2's input_length is dropped by io/dialect_rules.cpp.
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class Embedding : public Layer {
 public:
  explicit Embedding(Json given)
      : Layer(std::move(given)),
        input_dim_(require<int64_t>(config(), "input_dim")),
        output_dim_(require<int64_t>(config(), "output_dim")),
        mask_zero_(get<bool>(config(), "mask_zero", false)) {
    KCPP_CHECK(input_dim_ > 0 && output_dim_ > 0, ValueError, "Both `input_dim` and `output_dim` of layer '", name(),
               "' (Embedding) should be positive. Received input_dim=", input_dim_, " and output_dim=", output_dim_);
    KCPP_CHECK(!get<bool>(config(), "sparse", false), NotImplementedError, "Layer '", name(),
               "' (Embedding) uses sparse=True, which kerascpp does not support");
    KCPP_CHECK(config().value("lora_rank", Json()).is_null(), NotImplementedError, "Layer '", name(),
               "' (Embedding) uses LoRA (lora_rank=", config()["lora_rank"].dump(),
               "), which kerascpp does not support");
  }
  std::string class_name() const override { return "Embedding"; }
  bool supports_masking() const override { return mask_zero_; }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    Shape out = in[0];
    out.push_back(output_dim_);
    return {out};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    try {
      return {ops::take(embeddings_->value(), in[0])};
    } catch (const ValueError& e) {
      KCPP_THROW(ValueError, "Layer '", name(), "' (Embedding, input_dim=", input_dim_, "): ", e.what());
    }
  }

  // Keras: not_equal(inputs, 0) when mask_zero.
  std::vector<Tensor> compute_mask(const std::vector<Tensor>& in, const std::vector<Tensor>&) const override {
    if (!mask_zero_) return {};
    return {ops::as_mask(in[0])};
  }

 protected:
  void do_build(const std::vector<Shape>&) override { embeddings_ = add_weight("embeddings", {input_dim_, output_dim_}); }

 private:
  int64_t input_dim_, output_dim_;
  bool mask_zero_;
  VariablePtr embeddings_;
};

// keras.layers.Masking (keras/src/layers/core/masking.py): a step is masked when every feature equals
// mask_value; masked steps become 0, and the output carries the mask.
class Masking : public Layer {
 public:
  explicit Masking(Json given)
      : Layer(std::move(given)), mask_value_(get<float>(config(), "mask_value", 0.f)) {}
  std::string class_name() const override { return "Masking"; }
  bool supports_masking() const override { return true; }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    KCPP_CHECK(!in[0].empty(), ValueError, "Layer '", name(), "' (Masking) needs an input of rank >= 1");
    return in;
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    // outputs = where(any(x != mask_value, -1, keepdims), x, 0): x times the mask, so gradients flow.
    const Tensor keep = step_mask(in[0]);
    Shape s = keep.shape();
    s.push_back(1);
    return {ops::binary(ops::BinaryOp::multiply, in[0], keep.reshape(s))};
  }

  std::vector<Tensor> compute_mask(const std::vector<Tensor>& in, const std::vector<Tensor>&) const override {
    return {step_mask(in[0])};
  }

 private:
  // Keras: any(not_equal(x, mask_value), axis=-1), in one pass over x (float32 0 / 1, as kerascpp's masks).
  Tensor step_mask(const Tensor& x) const {
    if (x.dtype() != DType::float32 || x.rank() < 1)
      return ops::any(ops::not_equal(x, Tensor::from_vector({}, {mask_value_})), {-1});
    Shape s = x.shape();
    const int64_t features = s.back();
    s.pop_back();
    Tensor keep = Tensor::empty(s);
    const int64_t rows = keep.size();
    const float* p = x.data<float>();
    float* k = keep.data<float>();
    for (int64_t r = 0; r < rows; ++r, p += features) {
      bool any = false;
      for (int64_t f = 0; f < features && !any; ++f) any = p[f] != mask_value_;  // NaN != anything: kept
      k[r] = any ? 1.f : 0.f;
    }
    return keep;
  }
  float mask_value_;
};

}  // namespace
LayerPtr make_embedding(Json c) { return std::make_shared<Embedding>(std::move(c)); }
LayerPtr make_masking(Json c) { return std::make_shared<Masking>(std::move(c)); }
}  // namespace kerascpp::layers
