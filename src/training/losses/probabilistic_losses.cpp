// The probabilistic losses of keras/src/losses/losses.py: BinaryCrossentropy,
// CategoricalCrossentropy, SparseCategoricalCrossentropy, KLDivergence, Poisson, with the
// numerics of the TensorFlow backend (keras/src/backend/tensorflow/nn.py): probabilities are
// clipped to [eps, 1 - eps]; logits go through the stable sigmoid / log-softmax forms.
#include <cmath>
#include <optional>
#include <string>

#include "training/losses/loss_classes.h"
#include "training/losses/loss_utils.h"

namespace kerascpp::losses::detail {
namespace {

using ops::UnaryOp;

Tensor negate(const Tensor& x) { return mul(x, scalar(-1.f)); }

// y_true * a + b on a copy (labels are never differentiated).
Tensor affine_labels(const Tensor& t, float a, float b) {
  Tensor y = t.copy();
  float* d = y.data<float>();
  for (int64_t i = 0; i < y.size(); ++i) d[i] = d[i] * a + b;
  return y;
}

int int_option(const Json& c, const std::string& cls, const char* key, int fallback) {
  const double v = number_option(c, cls, key, fallback);
  KCPP_CHECK(v == std::floor(v), ValueError, cls, ": `", key, "` must be an integer. Received: ", key, "=", v);
  return static_cast<int>(v);
}

// The elementwise binary crossentropy of labels z and predictions x: from the logits as
// tf.nn.sigmoid_cross_entropy_with_logits (max(x, 0) - x z + log(1 + exp(-|x|))), else of the clipped
// probabilities.
Tensor binary_crossentropy_of(const Tensor& z, const Tensor& x, bool from_logits) {
  if (from_logits)
    return add(sub(ops::unary(UnaryOp::relu, x), mul(x, z)), ops::unary(UnaryOp::softplus, negate(ops::unary(UnaryOp::abs, x))));
  const Tensor p = clip(x, kEpsilon, kOneMinusEpsilon), one = scalar(1.f);
  return negate(add(mul(z, ops::unary(UnaryOp::log, p)), mul(sub(one, z), ops::unary(UnaryOp::log, sub(one, p)))));
}

// BinaryCrossentropy and CategoricalCrossentropy share from_logits, label_smoothing and axis.
class CrossentropyBase : public Loss {
 public:
  CrossentropyBase(const Json& c, const char* cls, const char* default_name) : Loss(c, default_name), cls_(cls) {
    check_keys(c, cls_, {"from_logits", "label_smoothing", "axis"});
    from_logits_ = bool_option(c, cls_, "from_logits", false);
    label_smoothing_ = number_option(c, cls_, "label_smoothing", 0.0);
    axis_ = int_option(c, cls_, "axis", -1);
    config_["from_logits"] = from_logits_;
    config_["label_smoothing"] = label_smoothing_;
    config_["axis"] = axis_;
  }
  std::string class_name() const override { return cls_; }

 protected:
  // keras binary_crossentropy's labels: y_true * (1 - label_smoothing) + 0.5 * label_smoothing.
  Tensor binary_labels(const Tensor& y_true) const {
    if (label_smoothing_ == 0) return y_true;
    return affine_labels(y_true, static_cast<float>(1.0 - label_smoothing_), static_cast<float>(0.5 * label_smoothing_));
  }
  // keras categorical (focal) crossentropy's labels: y_true * (1 - label_smoothing) + label_smoothing / k,
  // k the size of the LAST axis whatever `axis` is, the division in float32.
  Tensor categorical_labels(const Aligned& a) const {
    if (label_smoothing_ == 0) return a.y_true;
    const float k = a.implicit_last ? 1.f : static_cast<float>(a.y_true.dim(-1));
    return affine_labels(a.y_true, static_cast<float>(1.0 - label_smoothing_), static_cast<float>(label_smoothing_) / k);
  }
  std::string cls_;
  bool from_logits_ = false;
  double label_smoothing_ = 0;
  int axis_ = -1;
};

class BinaryCrossentropy : public CrossentropyBase {
 public:
  explicit BinaryCrossentropy(const Json& c) : CrossentropyBase(c, "BinaryCrossentropy", "binary_crossentropy") {}
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const Aligned a = align(cls_, y_true, y_pred);
    check_same_shape(cls_, a.y_true, a.y_pred);
    const Tensor bce = binary_crossentropy_of(binary_labels(a.y_true), a.y_pred, from_logits_);
    return mean_last(bce, a, axis_);
  }
};

// The crossentropy base reads from_logits, label_smoothing and axis; the focal options are read by the
// focal classes, checked here with the rest.
Json focal_options(const Json& c, const char* cls) {
  const bool binary = std::string(cls) == "BinaryFocalCrossentropy";
  if (binary)
    check_keys(c, cls, {"from_logits", "label_smoothing", "axis", "apply_class_balancing", "alpha", "gamma"});
  else
    check_keys(c, cls, {"from_logits", "label_smoothing", "axis", "alpha", "gamma"});
  Json base = c.is_object() ? c : Json::object();
  for (const char* k : {"apply_class_balancing", "alpha", "gamma"}) base.erase(k);
  return base;
}

// base^gamma (ops.power), differentiable in the base: the focal losses' modulating factor.
Tensor power(const Tensor& base, double gamma) {
  return ops::map_binary(
      "power", base, scalar(static_cast<float>(gamma)), [](float b, float e) { return std::pow(b, e); },
      [](float b, float e, float) { return e * std::pow(b, e - 1.f); },
      [](float b, float, float y) { return b > 0.f ? y * std::log(b) : 0.f; });
}

// (1 - p_t)^gamma * bce, p_t the probability given to the true label; with apply_class_balancing each
// term weighs alpha (positives) or 1 - alpha. from_logits computes bce from the logits, as Keras's
// binary_crossentropy does on the output of ops.sigmoid (its _keras_logits).
class BinaryFocalCrossentropy : public CrossentropyBase {
 public:
  explicit BinaryFocalCrossentropy(const Json& c)
      : CrossentropyBase(focal_options(c, "BinaryFocalCrossentropy"), "BinaryFocalCrossentropy",
                         "binary_focal_crossentropy") {
    const char* cls = "BinaryFocalCrossentropy";
    balancing_ = bool_option(c, cls, "apply_class_balancing", false);
    alpha_ = number_option(c, cls, "alpha", 0.25);
    gamma_ = number_option(c, cls, "gamma", 2.0);
    config_["apply_class_balancing"] = balancing_;
    config_["alpha"] = alpha_;
    config_["gamma"] = gamma_;
  }
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const Aligned a = align(cls_, y_true, y_pred);
    check_same_shape(cls_, a.y_true, a.y_pred);
    const Tensor z = binary_labels(a.y_true), &x = a.y_pred, one = scalar(1.f);
    const Tensor p = from_logits_ ? ops::unary(UnaryOp::sigmoid, x) : x;
    const Tensor bce = binary_crossentropy_of(z, x, from_logits_);
    const Tensor p_t = add(mul(z, p), mul(sub(one, z), sub(one, p)));
    Tensor focal = mul(power(sub(one, p_t), gamma_), bce);
    if (balancing_) {
      const float alpha = static_cast<float>(alpha_);
      focal = mul(add(mul(z, scalar(alpha)), mul(sub(one, z), scalar(1.f - alpha))), focal);
    }
    return mean_last(focal, a, axis_);
  }

 private:
  bool balancing_ = false;
  double alpha_ = 0.25, gamma_ = 2.0;
};

// sum over the classes of alpha (1 - p)^gamma * -y log p, p the predictions renormalised and clipped
// (softmax of the logits with from_logits).
class CategoricalFocalCrossentropy : public CrossentropyBase {
 public:
  explicit CategoricalFocalCrossentropy(const Json& c)
      : CrossentropyBase(focal_options(c, "CategoricalFocalCrossentropy"), "CategoricalFocalCrossentropy",
                         "categorical_focal_crossentropy") {
    alpha_ = number_option(c, cls_, "alpha", 0.25);
    gamma_ = number_option(c, cls_, "gamma", 2.0);
    config_["alpha"] = alpha_;
    config_["gamma"] = gamma_;
  }
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const Aligned a = align(cls_, y_true, y_pred);
    check_same_shape(cls_, a.y_true, a.y_pred);
    KCPP_CHECK(a.y_pred.rank() >= 1, ValueError, cls_, ": y_pred must be at least rank 1. Received: y_pred.shape=",
               shape_str(a.y_pred.shape()));
    const Tensor t = categorical_labels(a);
    Tensor p = from_logits_ ? ops::softmax(a.y_pred, axis_) : a.y_pred;
    p = clip(div(p, ops::sum(p, axis_, true)), kEpsilon, kOneMinusEpsilon);
    const Tensor cce = negate(mul(t, ops::unary(UnaryOp::log, p)));
    const Tensor weighting = mul(power(sub(scalar(1.f), p), gamma_), scalar(static_cast<float>(alpha_)));
    return ops::sum(mul(weighting, cce), axis_);
  }

 private:
  double alpha_ = 0.25, gamma_ = 2.0;
};

class CategoricalCrossentropy : public CrossentropyBase {
 public:
  explicit CategoricalCrossentropy(const Json& c)
      : CrossentropyBase(c, "CategoricalCrossentropy", "categorical_crossentropy") {}
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const Aligned a = align(cls_, y_true, y_pred);
    check_same_shape(cls_, a.y_true, a.y_pred);
    KCPP_CHECK(a.y_pred.rank() >= 1, ValueError, cls_, ": y_pred must be at least rank 1. Received: y_pred.shape=",
               shape_str(a.y_pred.shape()));
    const Tensor t = categorical_labels(a);
    const Tensor& x = a.y_pred;
    Tensor log_p;
    if (a.implicit_last) {
      // One class on an implicit axis: softmax is 1 and output / sum(output) is 1.
      log_p = from_logits_ ? sub(x, x) : ops::unary(UnaryOp::log, clip(div(x, x), kEpsilon, kOneMinusEpsilon));
      return negate(mul(t, log_p));
    }
    if (from_logits_) {
      log_p = ops::log_softmax(x, axis_);  // tf.nn.softmax_cross_entropy_with_logits
    } else {
      const Tensor p = div(x, ops::sum(x, axis_, true));
      log_p = ops::unary(UnaryOp::log, clip(p, kEpsilon, kOneMinusEpsilon));
    }
    return negate(ops::sum(mul(t, log_p), axis_));
  }
};

class SparseCategoricalCrossentropy : public Loss {
 public:
  explicit SparseCategoricalCrossentropy(const Json& c) : Loss(c, "sparse_categorical_crossentropy") {
    const char* cls = "SparseCategoricalCrossentropy";
    check_keys(c, cls, {"from_logits", "ignore_class", "axis"});
    from_logits_ = bool_option(c, cls, "from_logits", false);
    const Json ignore = c.is_object() && c.contains("ignore_class") ? c["ignore_class"] : Json();
    KCPP_CHECK(ignore.is_null() || ignore.is_number_integer(), ValueError, cls, ": `ignore_class` must be an integer "
               "or None. Received: ignore_class=", ignore.dump());
    if (ignore.is_number_integer()) ignore_class_ = ignore.get<int64_t>();
    const int axis = int_option(c, cls, "axis", -1);
    KCPP_CHECK(axis == -1, ValueError, cls, ": Only axis=-1 is currently supported. Received: axis=", axis);
    config_["from_logits"] = from_logits_;
    config_["ignore_class"] = ignore;  // Keras 3.15 writes ignore_class but not axis
  }
  // ignore_class: 1 where the label counts, 0 where it is the ignored class (Keras's valid_mask).
  Tensor keras_mask(const Tensor& y_true, const Tensor& y_pred) const override {
    if (!ignore_class_) return Tensor();
    const Tensor labels = class_labels(y_true, y_pred);
    Tensor m = Tensor::empty(labels.shape());
    for (int64_t i = 0; i < labels.size(); ++i)
      m.data<float>()[i] = labels.data<float>()[i] == static_cast<float>(*ignore_class_) ? 0.f : 1.f;
    return m;
  }
  std::string class_name() const override { return "SparseCategoricalCrossentropy"; }

  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const std::string cls = class_name();
    const Aligned a = align(cls, y_true, y_pred);
    const Tensor labels = class_labels(y_true, y_pred);
    const int64_t k = a.implicit_last ? 1 : a.y_pred.dim(-1);
    const Tensor valid = keras_mask(y_true, y_pred);
    // One-hot labels (tf.cast to int64 truncates), checked like tf.nn.sparse_softmax_cross_entropy_with_logits.
    Tensor onehot = Tensor::zeros(a.implicit_last ? labels.shape() : a.y_pred.shape());
    const float* l = labels.data<float>();
    float* o = onehot.data<float>();
    for (int64_t i = 0; i < labels.size(); ++i) {
      if (valid.defined() && valid.data<float>()[i] == 0.f) continue;  // Keras: label 0, its loss masked to 0
      const double v = std::trunc(static_cast<double>(l[i]));
      KCPP_CHECK(v >= 0 && v < static_cast<double>(k), ValueError, cls, ": Received a label value of ", l[i],
                 " which is outside the valid range of [0, ", k, ").");
      o[i * k + static_cast<int64_t>(v)] = 1.f;
    }
    const Tensor& x = a.y_pred;
    // tf.nn.sparse_softmax_cross_entropy_with_logits on the logits, or on log(clip(p)) for
    // probabilities (which renormalises the clipped probabilities).
    const Tensor logits = from_logits_ ? x : ops::unary(UnaryOp::log, clip(x, kEpsilon, kOneMinusEpsilon));
    if (a.implicit_last) return negate(mul(onehot, sub(logits, logits)));
    const Tensor res = negate(ops::sum(mul(onehot, ops::log_softmax(logits, -1)), -1));
    return valid.defined() ? mul(res, valid) : res;  // an ignored entry: no one-hot, 0 and no gradient
  }

 private:
  // The class indices, the shape of y_pred without its class axis (a trailing 1 of y_true dropped).
  Tensor class_labels(const Tensor& y_true, const Tensor& y_pred) const {
    const std::string cls = class_name();
    const Aligned a = align(cls, y_true, y_pred);
    Tensor labels = a.y_true;
    Shape want = a.y_pred.shape();
    if (!a.implicit_last) {
      if (labels.rank() == a.y_pred.rank() && labels.rank() > 0 && labels.dim(-1) == 1)
        labels = labels.reshape(Shape(labels.shape().begin(), labels.shape().end() - 1));
      KCPP_CHECK(!want.empty(), ValueError, cls, ": y_pred must be at least rank 1. Received: y_pred.shape=()");
      want.pop_back();
    }
    KCPP_CHECK(labels.shape() == want, ValueError, cls,
               ": y_true must have the shape of y_pred without its last axis (class indices). Received: "
               "y_true.shape=", shape_str(y_true.shape()), ", y_pred.shape=", shape_str(y_pred.shape()));
    return labels;
  }
  bool from_logits_ = false;
  std::optional<int64_t> ignore_class_;
};

// sum(y_true * log(y_true / y_pred)) with both clipped to [eps, 1].
class KLDivergence : public Loss {
 public:
  explicit KLDivergence(const Json& c) : Loss(c, "kl_divergence") { check_keys(c, "KLDivergence", {}); }
  std::string class_name() const override { return "KLDivergence"; }
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const Aligned a = align("KLDivergence", y_true, y_pred);
    check_broadcast("KLDivergence", a.y_true, a.y_pred);
    const Tensor t = clip(a.y_true, kEpsilon, 1.f);
    const Tensor p = clip(a.y_pred, kEpsilon, 1.f);
    return sum_last(mul(t, ops::unary(UnaryOp::log, div(t, p))), a);
  }
};

// mean(y_pred - y_true * log(y_pred + eps))
class Poisson : public Loss {
 public:
  explicit Poisson(const Json& c) : Loss(c, "poisson") { check_keys(c, "Poisson", {}); }
  std::string class_name() const override { return "Poisson"; }
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const Aligned a = align("Poisson", y_true, y_pred);
    check_broadcast("Poisson", a.y_true, a.y_pred);
    const Tensor logp = ops::unary(UnaryOp::log, add(a.y_pred, scalar(kEpsilon)));
    return mean_last(sub(a.y_pred, mul(a.y_true, logp)), a);
  }
};

}  // namespace

LossPtr make_binary_crossentropy(const Json& c) { return std::make_shared<BinaryCrossentropy>(c); }
LossPtr make_binary_focal_crossentropy(const Json& c) { return std::make_shared<BinaryFocalCrossentropy>(c); }
LossPtr make_categorical_focal_crossentropy(const Json& c) { return std::make_shared<CategoricalFocalCrossentropy>(c); }
LossPtr make_categorical_crossentropy(const Json& c) { return std::make_shared<CategoricalCrossentropy>(c); }
LossPtr make_sparse_categorical_crossentropy(const Json& c) { return std::make_shared<SparseCategoricalCrossentropy>(c); }
LossPtr make_kl_divergence(const Json& c) { return std::make_shared<KLDivergence>(c); }
LossPtr make_poisson(const Json& c) { return std::make_shared<Poisson>(c); }

}  // namespace kerascpp::losses::detail
