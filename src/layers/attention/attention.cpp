#include "layers/attention/attention.h"

#include "layers/attention/attention_masks.h"
#include "layers/config_utils.h"
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {
Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::multiply, a, b); }
Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::add, a, b); }
}  // namespace

Attention::Attention(Json given, std::string cls)
    : Layer(std::move(given)),
      use_scale_(get<bool>(config(), "use_scale", cls == "AdditiveAttention")),
      cls_(std::move(cls)),
      dropout_(get<float>(config(), "dropout", 0.f)) {
  const std::string mode = get<std::string>(config(), "score_mode", "dot");
  KCPP_CHECK(mode == "dot" || mode == "concat", ValueError, "Invalid value for argument score_mode of layer '", name(),
             "' (", cls_, "). Expected one of {'dot', 'concat'}. Received: score_mode=", mode);
  concat_ = mode == "concat" && cls_ == "Attention";
  KCPP_CHECK(dropout_ >= 0.f && dropout_ < 1.f, ValueError, "Invalid dropout of layer '", name(), "' (", cls_,
             "): expected a float in [0, 1). Received: dropout=", dropout_);
}

std::vector<Shape> Attention::compute_output_shape(const std::vector<Shape>& in) const {
  return call_output_shapes(in, Json::object());
}

std::vector<Shape> Attention::call_output_shapes(const std::vector<Shape>& in, const Json& options) const {
  KCPP_CHECK(in.size() == 2 || in.size() == 3, ValueError, cls_, " layer '", name(), "' accepts inputs list of length 2 "
             "or 3, namely [query, value] or [query, value, key]. Received length: ", in.size(), ".");
  const Shape& q = in[0];
  const Shape& v = in[1];
  const Shape& k = in.size() > 2 ? in[2] : in[1];
  KCPP_CHECK(q.size() == 3 && v.size() == 3 && k.size() == 3, NotImplementedError, "Layer '", name(), "' (", cls_,
             "): kerascpp takes query, value and key of rank 3 (batch, steps, dim). Received: ", shape_str(q), ", ",
             shape_str(v), ", ", shape_str(k));
  KCPP_CHECK(q[2] == k[2] && (k[1] < 0 || v[1] < 0 || k[1] == v[1]), ValueError, "Layer '", name(), "' (", cls_,
             "): query and key must share their last dimension and key and value their steps. Received: query ",
             shape_str(q), ", value ", shape_str(v), ", key ", shape_str(k));
  std::vector<Shape> out = {{q[0], q[1], v[2]}};
  if (options.value("return_attention_scores", false)) out.push_back({q[0], q[1], k[1]});
  return out;
}

void Attention::do_build(const std::vector<Shape>& in) {
  compute_output_shape(in);
  if (cls_ == "AdditiveAttention") {
    if (use_scale_) scale_ = add_weight("scale", {in[0][2]});
    return;
  }
  if (use_scale_) scale_ = add_weight("scale", {});
  if (concat_) concat_score_weight_ = add_weight("concat_score_weight", {});
}

Tensor Attention::scores(const Tensor& q, const Tensor& k) const {
  if (!concat_) {
    Tensor s = ops::batch_matmul(q, ops::transpose(k, {0, 2, 1}));
    return scale_ ? mul(s, scale_->value()) : s;
  }
  // concat_score_weight * sum(tanh(scale * (q[:, :, None] + k[:, None])), -1)
  Tensor qk = add(q.reshape({q.dim(0), q.dim(1), 1, q.dim(2)}), k.reshape({k.dim(0), 1, k.dim(1), k.dim(2)}));
  if (scale_) qk = mul(scale_->value(), qk);
  return mul(concat_score_weight_->value(), ops::sum(ops::unary(ops::UnaryOp::tanh, qk), -1));
}

std::vector<Tensor> Attention::call(const std::vector<Tensor>& in, const CallContext& ctx) const {
  const Tensor& q = in[0];
  const Tensor& v = in[1];
  const Tensor& k = in.size() > 2 ? in[2] : in[1];
  Tensor s = scores(q, k);
  Tensor score_mask;
  if (ctx.mask(1).defined()) score_mask = ctx.mask(1).reshape({v.dim(0), 1, v.dim(1)});
  if (ctx.option("use_causal_mask", false)) score_mask = and_masks(score_mask, causal_mask(q.dim(1), k.dim(1)));
  Tensor weights = masked_softmax(s, score_mask, 1, MaskedRows::uniform);  // scores - 1e9 where masked
  Tensor w = weights;
  if (ctx.training && dropout_ > 0.f) {
    std::mt19937_64 rng = layer_rng(ctx, name());
    w = keras_dropout(weights, dropout_, weights.shape(), rng);
  }
  Tensor out = ops::batch_matmul(w, v);
  if (ctx.mask(0).defined()) out = mul(out, ctx.mask(0).reshape({q.dim(0), q.dim(1), 1}));
  if (ctx.option("return_attention_scores", false)) return {out, w};  // Keras returns them after dropout
  return {out};
}

std::vector<Tensor> Attention::compute_mask(const std::vector<Tensor>&, const std::vector<Tensor>& masks) const {
  return {masks.empty() ? Tensor() : masks[0]};
}

namespace {
// keras.layers.AdditiveAttention: sum(scale * tanh(q[:, :, None] + k[:, None]), -1), scale (dim,).
class AdditiveAttention : public Attention {
 public:
  explicit AdditiveAttention(const Json& c) : Attention(c, "AdditiveAttention") {}

 protected:
  Tensor scores(const Tensor& q, const Tensor& k) const override {
    Tensor t = ops::unary(ops::UnaryOp::tanh, add(q.reshape({q.dim(0), q.dim(1), 1, q.dim(2)}),
                                                 k.reshape({k.dim(0), 1, k.dim(1), k.dim(2)})));
    return ops::sum(scale_ ? mul(scale_->value(), t) : t, -1);
  }
};
}  // namespace

LayerPtr make_attention(Json c) { return std::make_shared<Attention>(std::move(c), "Attention"); }
LayerPtr make_additive_attention(Json c) { return std::make_shared<AdditiveAttention>(std::move(c)); }

}  // namespace kerascpp::layers
