// keras.layers.MultiHeadAttention and GroupQueryAttention (keras/src/layers/attention/): query, value
// and key projected by EinsumDense layers to heads, scaled dot-product attention over the attention
// axes, the heads combined by a last EinsumDense. Keras's own einsum equations are built here the same
// way, so weights of any attention_axes / output_shape load as Keras laid them out.
//
//   MultiHeadAttention(num_heads=2, key_dim=4)(query (b, t, d), value (b, s, d')) -> (b, t, d)
//   ..., return_attention_scores=True -> and the scores (b, heads, t, s)
//
// Masks: the query's, value's and key's Keras masks, use_causal_mask, sliding_window and an
// attention_mask input are ANDed into one (b, t, s) mask (inputs of rank 4 or more: Keras 3's
// broadcast of the Keras masks, e.g. (b, x, t, s) with attention_axes=2; the causal and window masks
// are (1, t, s) from axis 1 of the query and value whatever the attention axes, as Keras makes them,
// so they fit one attention axis: axis 1, or another of the same lengths). A query row whose every position is masked
// gets zero attention in Keras 3's explicit path (dropout, return_attention_scores or inputs of rank
// other than 3: its Softmax layer zeroes it) and uniform attention otherwise and in tf_keras.
// activity_regularizer (training): Keras 3 hands it to every projection, each penalising its output;
// the graph applies it to the layer's own outputs for GroupQueryAttention, which also sets it on
// itself, and for tf_keras's MultiHeadAttention, whose projections drop it (tf_keras's EinsumDense
// never keeps one): regularizes_own_outputs.
#include <cmath>

#include "layers/attention/attention_masks.h"
#include "layers/config_utils.h"
#include "layers/core/einsum_dense.h"
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"
#include "layers/regularizers.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

char letter(int i) { return static_cast<char>('a' + i); }

// keras's _build_proj_equation: free axes kept, bound axes contracted, output axes made.
struct Projection {
  std::string equation, bias_axes;
  int output_rank;
};
Projection proj_equation(int free_dims, int bound_dims, int output_dims) {
  std::string in, kernel, out, bias;
  int offset = 0;
  for (int i = 0; i < free_dims; ++i) in += letter(i), out += letter(i);
  offset += free_dims;
  for (int i = 0; i < bound_dims; ++i) in += letter(i + offset), kernel += letter(i + offset);
  offset += bound_dims;
  for (int i = 0; i < output_dims; ++i) kernel += letter(i + offset), out += letter(i + offset), bias += letter(i + offset);
  return {in + "," + kernel + "->" + out, bias, static_cast<int>(out.size())};
}

// keras's _build_attention_equation for projected tensors of `rank` (batch, <axes>, heads, channels).
struct AttentionEquations {
  std::string dot_product, combine;
  int scores_rank;
};
AttentionEquations attention_equations(int rank, const std::vector<int>& attn_axes) {
  std::string target, source, product;
  for (int i = 0; i < rank; ++i) target += letter(i);
  auto in_attn = [&](int i) { return std::find(attn_axes.begin(), attn_axes.end(), i) != attn_axes.end(); };
  int offset = rank;
  for (int i = 0; i < rank; ++i) source += (!in_attn(i) || i == rank - 1) ? target[i] : letter(offset++);
  for (int i = 0; i < rank; ++i)
    if (!in_attn(i) && i != rank - 1) product += target[i];
  for (int a : attn_axes) product += target[a];
  for (int a : attn_axes) product += source[a];
  return {source + "," + target + "->" + product, product + "," + source + "->" + target, static_cast<int>(product.size())};
}

Json null_dims(int n) { return Json(std::vector<Json>(std::max(n, 0), Json(nullptr))); }

class MultiHeadAttention : public Layer {
 public:
  MultiHeadAttention(Json given, std::string cls)
      : Layer(std::move(given)), cls_(std::move(cls)), grouped_(cls_ == "GroupQueryAttention") {
    if (grouped_) {
      heads_ = require<int64_t>(config(), "num_query_heads");
      kv_heads_ = require<int64_t>(config(), "num_key_value_heads");
      key_dim_ = value_dim_ = require<int64_t>(config(), "head_dim");
      KCPP_CHECK(heads_ > 0 && kv_heads_ > 0 && heads_ % kv_heads_ == 0, ValueError, "Layer '", name(),
                 "' (GroupQueryAttention): `num_query_heads` must be divisible by `num_key_value_heads`. Received: ",
                 heads_, " and ", kv_heads_);
    } else {
      heads_ = kv_heads_ = require<int64_t>(config(), "num_heads");
      key_dim_ = require<int64_t>(config(), "key_dim");
      value_dim_ = config().value("value_dim", Json()).is_number_integer()
                       ? config()["value_dim"].get<int64_t>()
                       : key_dim_;
    }
    KCPP_CHECK(heads_ > 0 && key_dim_ > 0 && value_dim_ > 0, ValueError, "Layer '", name(), "' (", cls_,
               "): the number of heads and their sizes must be positive integers");
    dropout_ = get<float>(config(), "dropout", 0.f);
    use_bias_ = get<bool>(config(), "use_bias", true);
    use_gate_ = get<bool>(config(), "use_gate", false);
    if (config().contains("sliding_window") && !config()["sliding_window"].is_null()) {
      window_ = config()["sliding_window"].get<int64_t>();
      KCPP_CHECK(window_ > 0, ValueError, "Layer '", name(), "' (", cls_, "): `sliding_window` must be `None` or a "
                 "positive integer. Received: sliding_window=", window_);
    }
    if (config().contains("output_shape") && !config()["output_shape"].is_null()) {
      const Json& o = config()["output_shape"];
      output_shape_ = o.is_number_integer() ? Shape{o.get<int64_t>()} : shape_from_json(o, "output_shape");
    }
    if (config().contains("attention_axes") && !config()["attention_axes"].is_null()) {
      const Json& a = config()["attention_axes"];
      attention_axes_ =
          a.is_number_integer() ? std::vector<int>{a.get<int>()} : int_list(config(), "attention_axes", {});
    }
    // Flash attention is a kernel for dot_product_attention's path: the same values (the backends that
    // have it differ by round-off), with Keras's two constraints. None (Keras's global default) is off.
    flash_ =
        config().value("flash_attention", Json()).is_boolean() && config()["flash_attention"].get<bool>();
    KCPP_CHECK(!flash_ || dropout_ == 0.f, ValueError, "Layer '", name(), "' (", cls_, "): Dropout is not supported "
               "when flash attention is enabled. Please set dropout to 0.0 to use flash attention.");
    activity_ = regularizer_from_config(config().value("activity_regularizer", Json()),
                                        "Layer '" + name() + "' (" + cls_ + ")");
  }
  std::string class_name() const override { return cls_; }
  bool supports_masking() const override { return true; }
  bool clears_input_masks() const override { return !grouped_ && !keras2_semantics(); }
  // Keras 3's GroupQueryAttention sets the layer's own too; tf_keras's MultiHeadAttention sets only it.
  bool regularizes_own_outputs() const override { return grouped_ || keras2_semantics(); }
  std::vector<TensorArgument> tensor_arguments() const override {
    return {{"query", "", true}, {"value", "", true}, {"key", "value", true}, {"attention_mask", "", false, false}};
  }
  Json call_options() const override { return {{"return_attention_scores", false}, {"use_causal_mask", false}}; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    return call_output_shapes(in, Json::object());
  }
  std::vector<Shape> call_output_shapes(const std::vector<Shape>& in, const Json& options) const override {
    check_flash(options.value("return_attention_scores", false));
    KCPP_CHECK(in.size() == 3 || in.size() == 4, ValueError, "Layer '", name(), "' (", cls_,
               ") takes query, value, key and an optional attention_mask. Received ", in.size(), " inputs");
    const Shape &q = in[0], &v = in[1], &k = in[2];
    KCPP_CHECK(v.size() == k.size() && std::equal(v.begin() + 1, v.end() - 1, k.begin() + 1), ValueError,
               "All dimensions of `value` and `key`, except the last one, must be equal. Received: value_shape=",
               shape_str(v), " and key_shape=", shape_str(k), " (layer '", name(), "')");
    KCPP_CHECK(q.size() >= 3 && q.size() == v.size(), NotImplementedError, "Layer '", name(), "' (", cls_,
               "): query and value of one rank (3 or more) expected. Received: ", shape_str(q), " and ", shape_str(v));
    KCPP_CHECK(!grouped_ || (q.size() == 3 && q.back() == v.back()), ValueError, "Layer '", name(),
               "' (GroupQueryAttention): query and value of rank 3 with one last dimension expected. Received: ",
               shape_str(q), " and ", shape_str(v));
    Shape out(q.begin(), q.end() - 1);
    if (output_shape_.empty()) out.push_back(q.back());
    out.insert(out.end(), output_shape_.begin(), output_shape_.end());
    std::vector<Shape> shapes = {out};
    if (options.value("return_attention_scores", false)) {
      // (batch, <other axes>, heads, <query attention axes>, <key attention axes>)
      const std::vector<int> axes = attention_axes(static_cast<int>(q.size()) + 1);
      Shape s = {q[0]};
      for (int d = 1; d < static_cast<int>(q.size()) - 1; ++d)
        if (std::find(axes.begin(), axes.end(), d) == axes.end()) s.push_back(q[d]);
      s.push_back(heads_);
      for (int a : axes) s.push_back(q[a]);
      for (int a : axes) s.push_back(k[a]);
      shapes.push_back(s);
    }
    return shapes;
  }
  std::vector<Tensor> compute_mask(const std::vector<Tensor>&, const std::vector<Tensor>& masks) const override {
    return {masks.empty() ? Tensor() : masks[0]};  // the query's
  }
  std::vector<Layer*> sublayers() const override {
    std::vector<Layer*> out = {query_.get(), key_.get()};
    if (gate_) out.push_back(gate_.get());
    out.push_back(value_.get());
    out.push_back(output_.get());
    return out;
  }
  // Keras 3 saves them under its attributes: MultiHeadAttention's properties, GroupQueryAttention's
  // private names (checked on Keras 3.15 files).
  std::vector<SaveableChildren> saveable_children() const override {
    const std::string p = grouped_ ? "_" : "";
    std::vector<SaveableChildren> out = {{p + "query_dense", {query_.get()}, false}, {p + "key_dense", {key_.get()}, false}};
    if (gate_) out.push_back({"_gate_dense", {gate_.get()}, false});
    out.push_back({p + "value_dense", {value_.get()}, false});
    out.push_back({p + "output_dense", {output_.get()}, false});
    return out;
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override {
    const Tensor &query = in[0], &value = in[1], &key = in[2];
    check_flash(ctx.option("return_attention_scores", false));
    const bool causal = ctx.option("use_causal_mask", false);
    Tensor mask = attention_mask(in, ctx, causal);
    Tensor q = query_->apply(query), k = key_->apply(key), v = value_->apply(value);
    // Keras 3 hands the activity_regularizer to every projection (EinsumDense), each penalising its output.
    auto regularize = [&](const Tensor& t) {
      if (!ctx.losses || !activity_.active() || keras2_semantics()) return;
      KCPP_CHECK(activity_.unsupported.empty(), NotImplementedError, activity_.unsupported);
      ctx.losses->push_back(activity_loss(activity_.l1, activity_.l2, t));
    };
    for (const Tensor* t : {&q, &k, &v}) regularize(*t);
    if (grouped_ && heads_ != kv_heads_) {
      k = ops::repeat(k, {1, 1, heads_ / kv_heads_, 1});
      v = ops::repeat(v, {1, 1, heads_ / kv_heads_, 1});
    }
    q = ops::scale_shift(q, 1.f / std::sqrt(static_cast<float>(key_dim_)), 0.f);
    const std::vector<int>& axes = axes_;
    const AttentionEquations& eq = equations_;
    Tensor scores = grouped_ ? ops::einsum(eq.dot_product, q, k) : ops::einsum(eq.dot_product, k, q);
    if (mask.defined()) mask = expand_mask(mask, scores.shape(), axes.size(), causal || window_ > 0);
    const bool explicit_path = dropout_ > 0.f || ctx.option("return_attention_scores", false) || query.rank() != 3;
    const MaskedRows rows = !keras2_semantics() && explicit_path ? MaskedRows::zero : MaskedRows::uniform;
    Tensor weights = masked_softmax(scores, mask, static_cast<int>(axes.size()), rows);
    Tensor w = weights;
    if (ctx.training && dropout_ > 0.f) {
      std::mt19937_64 rng = layer_rng(ctx, name());
      w = keras_dropout(weights, dropout_, weights.shape(), rng);
    }
    Tensor out = ops::einsum(eq.combine, w, v);
    if (gate_) {
      const Tensor g = gate_->apply(query);
      regularize(g);
      out = ops::binary(ops::BinaryOp::multiply, out, g);
    }
    out = output_->apply(out);
    regularize(out);
    if (ctx.option("return_attention_scores", false)) return {out, weights};
    return {out};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    compute_output_shape(in);
    const Shape &q = in[0], &v = in[1], &k = in[2];
    const int qr = static_cast<int>(q.size()), vr = static_cast<int>(v.size()), kr = static_cast<int>(k.size());
    axes_ = attention_axes(qr + 1);  // of the projected tensors (batch, <axes>, heads, channels)
    equations_ = grouped_ ? AttentionEquations{"bquh,bkuh->buqk", "buqk,bkuh->bquh", 4} : attention_equations(qr + 1, axes_);
    if (grouped_) {
      query_ = dense("query", "bqm,muh->bquh", Json::array({nullptr, heads_, key_dim_}), "uh", q, "linear");
      key_ = dense("key", "bkm,mvh->bkvh", Json::array({nullptr, kv_heads_, key_dim_}), "vh", k, "linear");
      if (use_gate_) gate_ = dense("gate", "bqm,muh->bquh", Json::array({nullptr, heads_, key_dim_}), "uh", q, "sigmoid");
      value_ = dense("value", "bkm,mvh->bkvh", Json::array({nullptr, kv_heads_, key_dim_}), "vh", v, "linear");
      output_ = dense("attention_output", "bquh,uhm->bqm", Json::array({nullptr, q.back()}), "m",
                      {-1, -1, heads_, value_dim_}, "linear");
      return;
    }
    auto heads = [](int rank, int64_t n, int64_t dim) {
      Json s = null_dims(rank - 1 - 2);
      s.push_back(n);
      s.push_back(dim);
      return s;
    };
    Projection p = proj_equation(qr - 1, 1, 2);
    query_ = dense("query", p.equation, heads(p.output_rank, heads_, key_dim_), p.bias_axes, q, "linear");
    p = proj_equation(kr - 1, 1, 2);
    key_ = dense("key", p.equation, heads(p.output_rank, heads_, key_dim_), p.bias_axes, k, "linear");
    if (use_gate_) {
      p = proj_equation(qr - 1, 1, 2);
      gate_ = dense("gate", p.equation, heads(p.output_rank, heads_, value_dim_), p.bias_axes, q, "sigmoid");
    }
    p = proj_equation(vr - 1, 1, 2);
    value_ = dense("value", p.equation, heads(p.output_rank, heads_, value_dim_), p.bias_axes, v, "linear");
    const Shape out_dims = output_shape_.empty() ? Shape{q.back()} : output_shape_;
    p = proj_equation(qr - 1, 2, static_cast<int>(out_dims.size()));
    Json o = null_dims(p.output_rank - 1 - static_cast<int>(out_dims.size()));
    for (int64_t d : out_dims) o.push_back(d);
    Shape projected = query_->compute_output_shape({q})[0];
    projected.back() = value_dim_;
    output_ = dense("attention_output", p.equation, o, p.bias_axes, projected, "linear");
  }

 private:
  // The attention axes of projected tensors of `rank`: Keras's default is every axis between the
  // batch and the heads.
  std::vector<int> attention_axes(int rank) const {
    std::vector<int> axes;
    if (attention_axes_.empty()) {
      for (int i = 1; i < rank - 2; ++i) axes.push_back(i);
    } else {
      for (int a : attention_axes_) axes.push_back(a >= 0 ? a : (rank - 1) + a);
    }
    for (int a : axes)
      KCPP_CHECK(a >= 1 && a < rank - 2, ValueError, "Layer '", name(), "' (", cls_, "): attention axis ", a,
                 " is not an axis between the batch and the features of inputs of rank ", rank - 1);
    return axes;
  }

  std::shared_ptr<EinsumDense> dense(const std::string& role, const std::string& equation, const Json& output_shape,
                                     const std::string& bias_axes, const Shape& input, const char* activation) {
    Json c = {{"name", name() + "/" + role}, {"equation", equation}, {"output_shape", output_shape},
              {"bias_axes", use_bias_ ? Json(bias_axes) : Json()}, {"activation", activation},
              {"kernel_regularizer", config_.value("kernel_regularizer", Json())},
              {"bias_regularizer", config_.value("bias_regularizer", Json())}, {"trainable", trainable()},
              {"kernel_initializer", config_.value("kernel_initializer", Json())},
              {"bias_initializer", config_.value("bias_initializer", Json())},
              {"kernel_constraint", config_.value("kernel_constraint", Json())},
              {"bias_constraint", config_.value("bias_constraint", Json())}};
    auto layer = std::make_shared<EinsumDense>(std::move(c));
    layer->set_build_budget(build_budget());
    layer->build({input});
    return layer;
  }

  void check_flash(bool return_attention_scores) const {
    KCPP_CHECK(!flash_ || !return_attention_scores, ValueError, "Layer '", name(), "' (", cls_, "): Returning attention "
               "scores is not supported when flash attention is enabled. Please disable flash attention to access "
               "attention scores.");
  }

  // Keras's _masked_softmax: 1-dims inserted into the mask before the attention axes (at axis
  // -2 * axes - 1) until it has the scores' rank; it must then broadcast to them. Keras raises on the
  // masks that do not fit, among them use_causal_mask's and sliding_window's (1, t, s), built from axis
  // 1 of the query and value whatever the attention axes.
  Tensor expand_mask(Tensor mask, const Shape& scores, size_t axes, bool auto_masks) const {
    const int at = -static_cast<int>(axes) * 2 - 1;
    const Shape given = mask.shape();
    const char* why = auto_masks ? "; use_causal_mask and sliding_window make a (1, t, s) mask from axis 1 of the query "
                                   "and value, whatever the attention axes" : "";
    KCPP_CHECK(given.size() <= scores.size(), ValueError, "Layer '", name(), "' (", cls_, "): the attention mask of shape ",
               shape_str(given), " has more axes than the attention scores of shape ", shape_str(scores));
    while (mask.rank() < static_cast<int>(scores.size())) {
      Shape s = mask.shape();
      const int pos = static_cast<int>(s.size()) + 1 + at;
      KCPP_CHECK(pos >= 0, ValueError, "Layer '", name(), "' (", cls_, "): the attention mask of shape ",
                 shape_str(given), " cannot be expanded to the attention scores of shape ", shape_str(scores), " over ",
                 axes, " attention axes (Keras's expand_dims at axis ", at, " is out of bounds for rank ", s.size(),
                 ")", why);
      s.insert(s.begin() + pos, 1);
      mask = mask.reshape(s);
    }
    for (int d = 1; d <= mask.rank(); ++d)
      KCPP_CHECK(mask.dim(-d) == 1 || mask.dim(-d) == scores[scores.size() - d], ValueError, "Layer '", name(), "' (",
                 cls_, "): the attention mask of shape ", shape_str(given), " (expanded to ", shape_str(mask.shape()),
                 ") does not broadcast to the attention scores of shape ", shape_str(scores), ", as Keras's Softmax "
                 "requires", why);
    return mask;
  }

  // The (batch, t, s) mask of a call (1 attends, 0 does not), or undefined for none.
  Tensor attention_mask(const std::vector<Tensor>& in, const CallContext& ctx, bool causal) const {
    const Tensor &query = in[0], &value = in[1];
    Tensor mask;
    const Tensor qm = ctx.mask(0), vm = ctx.mask(1), km = ctx.mask(2);
    KCPP_CHECK(query.rank() == 3 || !keras2_semantics() || !(qm.defined() || vm.defined() || km.defined()),
               NotImplementedError, "Layer '", name(), "' (", cls_, "): tf_keras's MultiHeadAttention fails on Keras "
               "masks of inputs of rank 4 or more (its softmax cannot broadcast them). Received: query shape ",
               shape_str(query.shape()));
    // Keras: the query's mask gets a last axis of 1 (b, *t, 1), the value's and key's one before their
    // last axis (b, ..., 1, s); ANDed by broadcasting (rank 3: (b, t, s)).
    auto with_one_at = [](const Tensor& m, int from_end) {
      Shape s = m.shape();
      s.insert(s.end() - from_end, 1);
      return m.reshape(s);
    };
    if (qm.defined()) mask = with_one_at(qm, 0);
    if (vm.defined()) mask = and_masks(mask, with_one_at(vm, 1));
    if (km.defined()) mask = and_masks(mask, with_one_at(km, 1));
    const int64_t t = query.dim(1), s = value.dim(1);
    if (causal) mask = and_masks(mask, causal_mask(t, s));
    if (window_ > 0) mask = and_masks(mask, sliding_window_mask(t, s, window_));
    if (in.size() > 3) {
      const Tensor given = ops::as_mask(in[3]);
      if (query.rank() == 3) {
        bool fits = given.rank() <= 3;
        const Shape want = {query.dim(0), t, s};
        for (int d = 1; fits && d <= given.rank(); ++d)
          fits = given.dim(-d) == 1 || given.dim(-d) == want[3 - d];
        KCPP_CHECK(fits, ValueError, "Layer '", name(), "' (", cls_, "): the attention_mask of shape ",
                   shape_str(given.shape()), " does not broadcast to (batch, query steps, value steps) = ",
                   shape_str(want));
      }
      mask = and_masks(given, mask);
    }
    return mask;
  }

  std::string cls_;
  bool grouped_;
  int64_t heads_, kv_heads_, key_dim_, value_dim_;
  float dropout_;
  bool flash_ = false;
  bool use_bias_, use_gate_;
  int64_t window_ = 0;
  Shape output_shape_;
  std::vector<int> attention_axes_;
  Regularizer activity_;  // activity_regularizer: on every projection's output (Keras 3)
  std::shared_ptr<EinsumDense> query_, key_, gate_, value_, output_;
  std::vector<int> axes_;  // set by do_build, as Keras's _build_attention
  AttentionEquations equations_;
};

}  // namespace

LayerPtr make_multi_head_attention(Json c) {
  return std::make_shared<MultiHeadAttention>(std::move(c), "MultiHeadAttention");
}
LayerPtr make_group_query_attention(Json c) {
  return std::make_shared<MultiHeadAttention>(std::move(c), "GroupQueryAttention");
}

}  // namespace kerascpp::layers
