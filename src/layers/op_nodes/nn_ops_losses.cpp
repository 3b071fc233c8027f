// NN op nodes, part two (nn_ops.cpp appends these): keras.ops.nn's cross-entropies and
// dot_product_attention as Keras 3's TensorFlow backend computes them, and tf.nn functions tf_keras
// records as TFOpLambda (the *_cross_entropy_with_logits, bias_add, crelu, local_response_normalization).
// Each is composed of differentiable ops (ops/ops.h), so gradients are theirs.
#include <algorithm>
#include <cmath>

#include "layers/op_nodes/op_node.h"
#include "ops/grad_util.h"

namespace kerascpp::layers::op_nodes {
namespace {
using ops::BinaryOp;
using ops::UnaryOp;
using ops::detail::scalar;

constexpr float kEpsilon = 1e-7f;  // keras.backend.epsilon(), the clipping of probabilities

Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::subtract, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::multiply, a, b); }
Tensor neg(const Tensor& x) { return ops::scale_shift(x, -1.f, 0.f); }
// tf.clip_by_value(p, epsilon, 1 - epsilon) (1 - 1e-7 rounds to 0.99999988 in float32, as in TensorFlow).
Tensor clip_probabilities(const Tensor& p) {
  return ops::binary(BinaryOp::minimum, ops::binary(BinaryOp::maximum, p, scalar(kEpsilon)),
                     scalar(static_cast<float>(1.0 - 1e-7)));
}
// log1p(exp(-|x|)), the tail of the logistic loss; derivative -sign(x) sigmoid(-|x|).
float log1p_exp_neg_abs(float x) { return std::log1p(std::exp(-std::fabs(x))); }
float log1p_exp_neg_abs_d(float x, float) {
  const float e = std::exp(-std::fabs(x));
  return (x > 0.f ? -1.f : x < 0.f ? 1.f : 0.f) * e / (1.f + e);
}

// Shapes that must agree dim by dim where both are known.
template <class T>
void same_shapes(const Args<T>& a, const Shape& t, const Shape& o, const char* name) {
  bool ok = t.size() == o.size();
  for (size_t d = 0; ok && d < t.size(); ++d) ok = t[d] < 0 || o[d] < 0 || t[d] == o[d];
  if (!ok) a.fail(name, "of the output's shape " + shape_str(o) + " (target.shape=" + shape_str(t) + ")");
}
template <class T>
int axis_in(const Args<T>& a, int rank, int fallback) {
  const Json& j = a.json("axis");
  if (!j.is_null() && !j.is_number_integer()) a.fail("axis", "one int");
  const int ax = j.is_null() ? fallback : j.get<int>();
  if (ax < -rank || ax >= rank) a.fail("axis", "in range for a tensor of rank " + std::to_string(rank));
  return ax < 0 ? ax + rank : ax;
}
Shape without(Shape s, int axis) {
  s.erase(s.begin() + axis);
  return s;
}

// ---- sigmoid cross-entropy: tf.nn.sigmoid_cross_entropy_with_logits(labels z, logits x) =
// max(x, 0) - x z + log1p(exp(-|x|)); from probabilities: -(z log p + (1 - z) log(1 - p)), p clipped.
Tensor sigmoid_xent_logits(const Tensor& z, const Tensor& x) {
  return add(sub(ops::relu(x), mul(x, z)), ops::map_unary("sigmoid_cross_entropy", x, log1p_exp_neg_abs, log1p_exp_neg_abs_d));
}
Shape binary_xent_shape(const Args<Shape>& a) {
  same_shapes(a, a.value("target"), a.value("output"), "target");
  return a.value("output");
}
Tensor binary_xent(const Args<Tensor>& a) {
  const Tensor t = a.value("target"), o = a.value("output");
  same_shapes(a, t.shape(), o.shape(), "target");
  if (a.get("from_logits", false)) return sigmoid_xent_logits(t, o);
  const Tensor p = clip_probabilities(o);
  const Tensor one_minus_t = ops::scale_shift(t, -1.f, 1.f), one_minus_p = ops::scale_shift(p, -1.f, 1.f);
  return neg(add(mul(t, ops::unary(UnaryOp::log, p)), mul(one_minus_t, ops::unary(UnaryOp::log, one_minus_p))));
}
Shape tf_sigmoid_xent_shape(const Args<Shape>& a) {
  same_shapes(a, a.value("labels"), a.value("logits"), "labels");
  return a.value("logits");
}
Tensor tf_sigmoid_xent(const Args<Tensor>& a) {
  const Tensor z = a.value("labels"), x = a.value("logits");
  same_shapes(a, z.shape(), x.shape(), "labels");
  return sigmoid_xent_logits(z, x);
}

// ---- softmax cross-entropy along an axis: -sum(labels * log_softmax(logits)); from probabilities
// (Keras, from_logits=False): p / sum(p), clipped, -sum(target * log p).
Tensor softmax_xent_logits(const Tensor& labels, const Tensor& logits, int axis) {
  return neg(ops::sum(mul(labels, ops::log_softmax(logits, axis)), axis, false));
}
Shape categorical_xent_shape(const Args<Shape>& a) {
  const Shape t = a.value("target"), o = a.value("output");
  if (o.empty()) a.fail("output", "of rank >= 1");
  same_shapes(a, t, o, "target");
  return without(o, axis_in(a, static_cast<int>(o.size()), -1));
}
Tensor categorical_xent(const Args<Tensor>& a) {
  const Tensor t = a.value("target"), o = a.value("output");
  if (o.rank() == 0) a.fail("output", "of rank >= 1");
  same_shapes(a, t.shape(), o.shape(), "target");
  const int axis = axis_in(a, o.rank(), -1);
  if (a.get("from_logits", false)) return softmax_xent_logits(t, o, axis);
  const Tensor p = clip_probabilities(ops::binary(BinaryOp::divide, o, ops::sum(o, axis, true)));
  return neg(ops::sum(mul(t, ops::unary(UnaryOp::log, p)), axis, false));
}
Shape tf_softmax_xent_shape(const Args<Shape>& a) {
  const Shape z = a.value("labels"), x = a.value("logits");
  if (x.empty()) a.fail("logits", "of rank >= 1");
  same_shapes(a, z, x, "labels");
  return without(x, axis_in(a, static_cast<int>(x.size()), -1));
}
Tensor tf_softmax_xent(const Args<Tensor>& a) {
  const Tensor z = a.value("labels"), x = a.value("logits");
  if (x.rank() == 0) a.fail("logits", "of rank >= 1");
  same_shapes(a, z.shape(), x.shape(), "labels");
  return softmax_xent_logits(z, x, axis_in(a, x.rank(), -1));
}

// ---- sparse softmax cross-entropy: integer labels over the last axis of the logits, as
// -log_softmax(logits)[label] (a one-hot of the labels picks it). A label outside [0, classes) is an
// error, as on TensorFlow's CPU kernel.
Tensor sparse_xent_logits(const Args<Tensor>& a, const char* name, const Tensor& labels, const Tensor& logits) {
  const int64_t c = logits.dim(-1);
  if (labels.size() * c != logits.size()) a.fail(name, "one class index per row of the logits");
  Tensor hot = Tensor::zeros(logits.shape());
  for (int64_t i = 0; i < labels.size(); ++i) {
    const float v = labels.data<float>()[i];
    const int64_t k = std::isfinite(v) ? static_cast<int64_t>(std::trunc(v)) : -1;
    if (k < 0 || k >= c)
      a.fail(name, "made of class indices in [0, " + std::to_string(c) + "); it holds " + std::to_string(v));
    hot.data<float>()[i * c + k] = 1.f;
  }
  return neg(ops::sum(mul(hot, ops::log_softmax(logits, -1)), -1, false));
}
// Keras squeezes a trailing 1 off a target of the output's rank.
template <class T>
Shape sparse_target_shape(const Args<T>& a, Shape t, const Shape& o) {
  if (o.empty()) a.fail("output", "of rank >= 1");
  const Json& ax = a.json("axis");
  if (!ax.is_null() && ax != -1 && ax != static_cast<int>(o.size()) - 1) a.fail("axis", "-1 (Keras supports only the last axis)");
  if (t.size() == o.size() && !t.empty() && t.back() == 1) t.pop_back();
  same_shapes(a, t, Shape(o.begin(), o.end() - 1), "target");
  return t;
}
Shape sparse_categorical_xent_shape(const Args<Shape>& a) {
  const Shape o = a.value("output");
  sparse_target_shape(a, a.value("target"), o);
  return Shape(o.begin(), o.end() - 1);
}
Tensor sparse_categorical_xent(const Args<Tensor>& a) {
  const Tensor t = a.value("target"), o = a.value("output");
  sparse_target_shape(a, t.shape(), o.shape());
  const Tensor logits = a.get("from_logits", false) ? o : ops::unary(UnaryOp::log, clip_probabilities(o));
  return sparse_xent_logits(a, "target", t, logits);
}
Shape tf_sparse_xent_shape(const Args<Shape>& a) {
  const Shape z = a.value("labels"), x = a.value("logits");
  if (x.empty()) a.fail("logits", "of rank >= 1");
  same_shapes(a, z, Shape(x.begin(), x.end() - 1), "labels");
  return z;
}
Tensor tf_sparse_xent(const Args<Tensor>& a) {
  const Tensor z = a.value("labels"), x = a.value("logits");
  if (x.rank() == 0) a.fail("logits", "of rank >= 1");
  same_shapes(a, z.shape(), Shape(x.shape().begin(), x.shape().end() - 1), "labels");
  return sparse_xent_logits(a, "labels", z, x);
}

// ---- dot_product_attention(query (B, T, N, H), key (B, S, K, H), value (B, S, K, Hv); bias, mask,
// scale, is_causal) -> (B, T, N, Hv), as the TensorFlow backend: key / value heads repeated to the
// query's when K > 1 divides N; logits = einsum(q, k) * scale (1 / sqrt(H) by default) + bias; masked
// (mask false, or above the diagonal when causal) logits set to -0.7 * 3.38953e38; softmax over S.
template <class T>
void attention_args(const Args<T>& a, const Shape& q, const Shape& k, const Shape& v) {
  for (auto [s, name] : {std::pair{&q, "query"}, std::pair{&k, "key"}, std::pair{&v, "value"}})
    if (s->size() != 4) a.fail(name, "a 4D tensor (batch, steps, heads, dim) (its shape is " + shape_str(*s) + ")");
  if (a.get("flash_attention", false)) a.fail("flash_attention", "false (the TensorFlow backend has no flash attention)");
  if (a.has("attn_logits_soft_cap"))
    a.fail("attn_logits_soft_cap", "supported by kerascpp (the backends disagree: TensorFlow ignores it, JAX applies it)");
  const int64_t n = q[2], kh = k[2];
  if (n >= 0 && kh >= 0 && n != kh && !(n > kh && kh > 1 && n % kh == 0))
    a.fail("key", "of the query's number of heads " + std::to_string(n) + ", or of a number > 1 dividing it (it has " +
                      std::to_string(kh) + ")");
}
Shape attention_shape(const Args<Shape>& a) {
  const Shape q = a.value("query"), k = a.value("key"), v = a.value("value");
  attention_args(a, q, k, v);
  Shape out = {q[0], q[1], q[2], v[3]};
  if (a.has("bias")) ops::broadcast_shape({q[0], q[2], q[1], k[1]}, a.value("bias"));
  return out;
}
Tensor attention(const Args<Tensor>& a) {
  Tensor q = a.value("query"), k = a.value("key"), v = a.value("value");
  attention_args(a, q.shape(), k.shape(), v.shape());
  if (q.dim(2) > k.dim(2)) {
    const int64_t groups = q.dim(2) / k.dim(2);
    k = ops::repeat(k, {1, 1, groups, 1});
    v = ops::repeat(v, {1, 1, groups, 1});
  }
  const float scale = a.has("scale") ? a.get("scale", 1.f) : 1.f / std::sqrt(static_cast<float>(k.dim(3)));
  Tensor logits = ops::scale_shift(ops::einsum("BTNH,BSNH->BNTS", q, k), scale, 0.f);
  if (a.has("bias")) logits = add(logits, a.value("bias"));
  const bool causal = a.get("is_causal", false);
  if (a.has("mask") || causal) {
    const Shape& s = logits.shape();
    Tensor keep = a.has("mask") ? ops::detail::broadcast_to(ops::as_mask(a.value("mask")), s).copy() : ops::detail::filled(s, 1.f);
    if (keep.shape() != s) a.fail("mask", "broadcastable to the logits' shape " + shape_str(s));
    const int64_t t_len = s[2], s_len = s[3];
    if (causal)
      for (int64_t i = 0; i < keep.size(); ++i)
        if ((i % s_len) > (i / s_len) % t_len) keep.data<float>()[i] = 0.f;
    logits = ops::where(keep, logits, ops::detail::filled(s, static_cast<float>(3.38953e38 * -0.7)));
  }
  return ops::einsum("BNTS,BSNH->BTNH", ops::softmax(logits, -1), v);
}

// ---- tf.nn.bias_add(value, bias, data_format): bias (C,) along the last axis, or axis 1 for NC...
int bias_axis(const Args<Tensor>& a, int rank) {
  const Json& f = a.json("data_format");
  if (f.is_null()) return rank - 1;
  if (!f.is_string()) a.fail("data_format", "a string");
  const std::string s = f.get<std::string>();
  if (s.size() >= 2 && s[0] == 'N' && s.back() == 'C') return rank - 1;
  if (s.size() >= 2 && s.substr(0, 2) == "NC") return 1;
  a.fail("data_format", "a TensorFlow data format (NHWC, NCHW, ...)");
}
Tensor bias_add(const Args<Tensor>& a) {
  const Tensor x = a.value("x"), b = a.value("bias");
  if (x.rank() < 2) a.fail("x", "of rank >= 2");
  const int ax = bias_axis(a, x.rank());
  if (b.rank() != 1 || b.dim(0) != x.dim(ax))
    a.fail("bias", "of shape (" + std::to_string(x.dim(ax)) + ",) (its shape is " + shape_str(b.shape()) + ")");
  if (ax == x.rank() - 1) return ops::bias_add(x, b);
  Shape s(x.rank(), 1);
  s[ax] = b.dim(0);
  return add(x, b.reshape(s));
}

// ---- tf.nn.crelu(features, axis=-1): concat([relu(x), relu(-x)], axis).
Shape crelu_shape(const Args<Shape>& a) {
  Shape s = a.value("x");
  if (s.empty()) a.fail("x", "of rank >= 1");
  const int ax = axis_in(a, static_cast<int>(s.size()), -1);
  if (s[ax] >= 0) s[ax] *= 2;
  return s;
}
Tensor crelu(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (x.rank() == 0) a.fail("x", "of rank >= 1");
  return ops::concatenate({ops::relu(x), ops::relu(neg(x))}, axis_in(a, x.rank(), -1));
}

// ---- tf.nn.local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5), 4D:
// x / (bias + alpha * sum of x^2 over the depth window [d - r, d + r]) ** beta.
Shape lrn_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  if (x.size() != 4) a.fail("x", "a 4D tensor (its shape is " + shape_str(x) + ")");
  if (a.get("depth_radius", 5) < 0) a.fail("depth_radius", "an int >= 0");
  return x;
}
Tensor lrn(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (x.rank() != 4) a.fail("x", "a 4D tensor (its shape is " + shape_str(x.shape()) + ")");
  const int64_t r = a.get("depth_radius", int64_t{5});
  if (r < 0) a.fail("depth_radius", "an int >= 0");
  const float bias = a.get("bias", 1.f), alpha = a.get("alpha", 1.f), beta = a.get("beta", 0.5f);
  const Tensor padded = ops::pad(ops::unary(UnaryOp::square, x), {{0, 0}, {0, 0}, {0, 0}, {r, r}});
  Tensor window;
  for (int64_t k = 0; k <= 2 * r; ++k) {
    const Tensor s = ops::slice(padded, {0, 0, 0, k}, x.shape());
    window = window.defined() ? add(window, s) : s;
  }
  const Tensor base = ops::scale_shift(window, alpha, bias);
  return mul(x, ops::unary(UnaryOp::exp, ops::scale_shift(ops::unary(UnaryOp::log, base), -beta, 0.f)));
}

}  // namespace

std::vector<OpDef> nn_ops_losses() {
  const std::vector<std::string> xent = {"target", "output", "from_logits", "axis"};
  return {
      OpDef{"ops.nn.BinaryCrossentropy", nullptr, {"target", "output", "from_logits"}, {}, binary_xent_shape, binary_xent},
      OpDef{"ops.nn.CategoricalCrossentropy", nullptr, xent, {}, categorical_xent_shape, categorical_xent},
      OpDef{"ops.nn.SparseCategoricalCrossentropy", nullptr, xent, {}, sparse_categorical_xent_shape, sparse_categorical_xent},
      OpDef{nullptr, "nn.sigmoid_cross_entropy_with_logits|compat.v1.nn.sigmoid_cross_entropy_with_logits", {"labels", "logits"},
            {}, tf_sigmoid_xent_shape, tf_sigmoid_xent},
      OpDef{nullptr, "nn.softmax_cross_entropy_with_logits|compat.v1.nn.softmax_cross_entropy_with_logits_v2",
            {"labels", "logits", "axis"}, {{"dim", "axis"}}, tf_softmax_xent_shape, tf_softmax_xent},
      OpDef{nullptr, "nn.sparse_softmax_cross_entropy_with_logits|compat.v1.nn.sparse_softmax_cross_entropy_with_logits",
            {"labels", "logits"}, {}, tf_sparse_xent_shape, tf_sparse_xent},
      OpDef{"ops.nn.DotProductAttention", nullptr,
            {"query", "key", "value", "bias", "mask", "scale", "is_causal", "flash_attention", "attn_logits_soft_cap"}, {},
            attention_shape, attention},
      OpDef{nullptr, "nn.bias_add", {"x", "bias", "data_format"}, {{"value", "x"}},
            [](const Args<Shape>& a) { return a.value("x"); }, bias_add},
      OpDef{nullptr, "nn.crelu|compat.v1.nn.crelu", {"x", "axis"}, {{"features", "x"}}, crelu_shape, crelu},
      OpDef{nullptr, "nn.local_response_normalization|nn.lrn", {"x", "depth_radius", "bias", "alpha", "beta"}, {{"input", "x"}},
            lrn_shape, lrn},
  };
}

}  // namespace kerascpp::layers::op_nodes
