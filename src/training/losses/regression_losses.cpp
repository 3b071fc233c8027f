// The regression losses of keras/src/losses/losses.py: MeanSquaredError, MeanAbsoluteError,
// MeanAbsolutePercentageError, MeanSquaredLogarithmicError, Huber, LogCosh, CosineSimilarity. Each is its Keras
// function on (y_true, y_pred) after squeeze_or_expand_to_same_rank, reduced over the last axis.
#include <cmath>

#include "training/losses/loss_classes.h"
#include "training/losses/loss_utils.h"

namespace kerascpp::losses::detail {
namespace {

using ops::UnaryOp;

// What the regression classes share: align, check the shapes broadcast, compute the elementwise
// error term, mean over the last axis.
class RegressionLoss : public Loss {
 public:
  RegressionLoss(const Json& config, const char* cls, const char* default_name,
                 std::initializer_list<const char*> options = {})
      : Loss(config, default_name), cls_(cls) {
    check_keys(config, cls_, options);
  }
  std::string class_name() const override { return cls_; }
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const Aligned a = align(cls_, y_true, y_pred);
    check_broadcast(cls_, a.y_true, a.y_pred);
    return mean_last(elementwise(a.y_true, a.y_pred), a);
  }

 protected:
  virtual Tensor elementwise(const Tensor& t, const Tensor& p) const = 0;

 private:
  std::string cls_;
};

class MeanSquaredError : public RegressionLoss {
 public:
  explicit MeanSquaredError(const Json& c) : RegressionLoss(c, "MeanSquaredError", "mean_squared_error") {}
  Tensor elementwise(const Tensor& t, const Tensor& p) const override { return ops::unary(UnaryOp::square, sub(t, p)); }
};

class MeanAbsoluteError : public RegressionLoss {
 public:
  explicit MeanAbsoluteError(const Json& c) : RegressionLoss(c, "MeanAbsoluteError", "mean_absolute_error") {}
  Tensor elementwise(const Tensor& t, const Tensor& p) const override { return ops::unary(UnaryOp::abs, sub(t, p)); }
};

// 100 * |(y_true - y_pred) / max(|y_true|, eps)|; the 100 is applied per element (Keras scales the
// mean, which is the same up to rounding).
class MeanAbsolutePercentageError : public RegressionLoss {
 public:
  explicit MeanAbsolutePercentageError(const Json& c)
      : RegressionLoss(c, "MeanAbsolutePercentageError", "mean_absolute_percentage_error") {}
  Tensor elementwise(const Tensor& t, const Tensor& p) const override {
    const Tensor diff = ops::unary(UnaryOp::abs, div(sub(t, p), maximum(ops::unary(UnaryOp::abs, t), kEpsilon)));
    return mul(diff, scalar(100.f));
  }
};

// square(log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1))
class MeanSquaredLogarithmicError : public RegressionLoss {
 public:
  explicit MeanSquaredLogarithmicError(const Json& c)
      : RegressionLoss(c, "MeanSquaredLogarithmicError", "mean_squared_logarithmic_error") {}
  Tensor elementwise(const Tensor& t, const Tensor& p) const override {
    const Tensor one = scalar(1.f);
    const Tensor first = ops::unary(UnaryOp::log, add(maximum(p, kEpsilon), one));
    const Tensor second = ops::unary(UnaryOp::log, add(maximum(t, kEpsilon), one));
    return ops::unary(UnaryOp::square, sub(first, second));
  }
};

// Keras: where(|e| <= delta, 0.5 e^2, delta |e| - 0.5 delta^2). With q = min(|e|, delta) that is
// 0.5 q^2 + delta (|e| - q): the same values and gradients, from ops that have a backward.
// Keras 3.15's Huber.get_config omits delta (so a round trip through Keras loses it); kerascpp
// writes it, which Keras's Huber(**config) accepts.
class Huber : public RegressionLoss {
 public:
  explicit Huber(const Json& c) : RegressionLoss(c, "Huber", "huber_loss", {"delta"}) {
    delta_ = static_cast<float>(number_option(c, "Huber", "delta", 1.0));
    config_["delta"] = number_option(c, "Huber", "delta", 1.0);
  }
  Tensor elementwise(const Tensor& t, const Tensor& p) const override {
    const Tensor a = ops::unary(UnaryOp::abs, sub(p, t));
    const Tensor q = minimum(a, delta_);
    return add(mul(scalar(0.5f), ops::unary(UnaryOp::square, q)), mul(scalar(delta_), sub(a, q)));
  }

 private:
  float delta_ = 1.f;
};

// log(cosh(x)) = x + softplus(-2x) - log(2), stable for large |x| (keras log_cosh).
class LogCosh : public RegressionLoss {
 public:
  explicit LogCosh(const Json& c) : RegressionLoss(c, "LogCosh", "log_cosh") {}
  Tensor elementwise(const Tensor& t, const Tensor& p) const override {
    const Tensor x = sub(p, t);
    const Tensor sp = ops::unary(UnaryOp::softplus, mul(x, scalar(-2.f)));
    return sub(add(x, sp), scalar(static_cast<float>(std::log(2.0))));
  }
};

// Keras's ops.normalize (order 2, epsilon 1e-7): x * min(rsqrt(sum(x^2 over axis)), 1 / epsilon).
Tensor l2_normalized(const Tensor& x, int axis) {
  const Tensor s = ops::sum(ops::unary(UnaryOp::square, x), axis, true);
  return mul(x, minimum(div(scalar(1.f), ops::unary(UnaryOp::sqrt, s)), 1e7f));
}

// -sum(normalize(y_true) * normalize(y_pred), axis): -1 for the same direction, 0 for orthogonal ones.
// Keras 3.15's get_config omits axis (a round trip through Keras loses it); kerascpp writes it, which
// Keras's CosineSimilarity(**config) accepts.
class CosineSimilarity : public Loss {
 public:
  explicit CosineSimilarity(const Json& c) : Loss(c, "cosine_similarity") {
    check_keys(c, "CosineSimilarity", {"axis"});
    const Json axis = c.is_object() && c.contains("axis") && !c["axis"].is_null() ? c["axis"] : Json(-1);
    KCPP_CHECK(axis.is_number_integer(), ValueError, "CosineSimilarity: `axis` must be an integer. Received: axis=",
               axis.dump());
    axis_ = axis.get<int>();
    config_["axis"] = axis_;
  }
  std::string class_name() const override { return "CosineSimilarity"; }
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const Aligned a = align("CosineSimilarity", y_true, y_pred);
    check_broadcast("CosineSimilarity", a.y_true, a.y_pred);
    if (a.implicit_last)  // Keras's (batch, 1): each value normalised alone, its sign
      return mul(mul(l2_normalized_each(a.y_true), l2_normalized_each(a.y_pred)), scalar(-1.f));
    const int axis = ops::normalize_axis(axis_, a.y_pred.rank());
    return mul(ops::sum(mul(l2_normalized(a.y_true, axis), l2_normalized(a.y_pred, axis)), axis), scalar(-1.f));
  }

 private:
  static Tensor l2_normalized_each(const Tensor& x) {  // over an implicit axis of size 1
    return mul(x, minimum(div(scalar(1.f), ops::unary(UnaryOp::sqrt, ops::unary(UnaryOp::square, x))), 1e7f));
  }
  int axis_ = -1;
};

}  // namespace

LossPtr make_cosine_similarity(const Json& c) { return std::make_shared<CosineSimilarity>(c); }
LossPtr make_mean_squared_error(const Json& c) { return std::make_shared<MeanSquaredError>(c); }
LossPtr make_mean_absolute_error(const Json& c) { return std::make_shared<MeanAbsoluteError>(c); }
LossPtr make_mean_absolute_percentage_error(const Json& c) { return std::make_shared<MeanAbsolutePercentageError>(c); }
LossPtr make_mean_squared_logarithmic_error(const Json& c) { return std::make_shared<MeanSquaredLogarithmicError>(c); }
LossPtr make_huber(const Json& c) { return std::make_shared<Huber>(c); }
LossPtr make_log_cosh(const Json& c) { return std::make_shared<LogCosh>(c); }

}  // namespace kerascpp::losses::detail
