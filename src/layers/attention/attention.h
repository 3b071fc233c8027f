// keras.layers.Attention (Luong: dot or concat scores) and AdditiveAttention (Bahdanau), called on
// [query, value] or [query, value, key]: (batch, Tq, dim), (batch, Tv, dim) -> (batch, Tq, dim), and the
// (batch, Tq, Tv) attention scores with return_attention_scores=True. The masks of the call ([query,
// value]) keep masked values out of the softmax and zero the masked queries' outputs; use_causal_mask
// lets position i see positions <= i. dropout drops attention weights in training.
#pragma once

#include "kerascpp/layer.h"

namespace kerascpp::layers {

class Attention : public Layer {
 public:
  Attention(Json given, std::string cls);
  std::string class_name() const override { return cls_; }
  bool supports_masking() const override { return true; }
  Json call_options() const override { return {{"return_attention_scores", false}, {"use_causal_mask", false}}; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override;
  std::vector<Shape> call_output_shapes(const std::vector<Shape>& in, const Json& options) const override;
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override;
  // The query's mask (the output's); the scores get none.
  std::vector<Tensor> compute_mask(const std::vector<Tensor>& in, const std::vector<Tensor>& masks) const override;
  // Keras starts AdditiveAttention's scale from GlorotUniform, Attention's from ones.
  Json initializer_for(const std::string& variable) const override {
    return cls_ == "AdditiveAttention" && variable == "scale" ? Json("glorot_uniform") : Layer::initializer_for(variable);
  }

 protected:
  void do_build(const std::vector<Shape>& in) override;
  // (batch, Tq, Tv) scores of query (batch, Tq, dim) against key (batch, Tv, dim).
  virtual Tensor scores(const Tensor& query, const Tensor& key) const;
  bool use_scale_;
  VariablePtr scale_;

 private:
  std::string cls_;
  bool concat_ = false;  // score_mode "concat"
  float dropout_;
  VariablePtr concat_score_weight_;
};

}  // namespace kerascpp::layers
