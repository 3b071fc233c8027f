// The hinge losses of keras/src/losses/losses.py: Hinge, SquaredHinge, CategoricalHinge.
#include "training/losses/loss_classes.h"
#include "training/losses/loss_utils.h"

namespace kerascpp::losses::detail {
namespace {

using ops::UnaryOp;

// keras convert_binary_labels_to_hinge: labels that are all 0 or 1 become -1 or 1; any other
// labels are used as they are. Works on a copy: labels are never differentiated.
Tensor hinge_labels(const Tensor& t) {
  const float* d = t.data<float>();
  for (int64_t i = 0; i < t.size(); ++i)
    if (d[i] != 0.f && d[i] != 1.f) return t;
  Tensor y = t.copy();
  float* o = y.data<float>();
  for (int64_t i = 0; i < y.size(); ++i) o[i] = 2.f * o[i] - 1.f;
  return y;
}

// max(1 - y_true * y_pred, 0), squared for SquaredHinge, then the mean over the last axis.
class HingeBase : public Loss {
 public:
  HingeBase(const Json& c, const char* cls, const char* default_name, bool squared)
      : Loss(c, default_name), cls_(cls), squared_(squared) {
    check_keys(c, cls_, {});
  }
  std::string class_name() const override { return cls_; }
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const Aligned a = align(cls_, y_true, y_pred);
    check_broadcast(cls_, a.y_true, a.y_pred);
    Tensor h = maximum(sub(scalar(1.f), mul(hinge_labels(a.y_true), a.y_pred)), 0.f);
    if (squared_) h = ops::unary(UnaryOp::square, h);
    return mean_last(h, a);
  }

 private:
  std::string cls_;
  bool squared_;
};

// max(neg - pos + 1, 0) with pos = sum(y_true * y_pred), neg = max((1 - y_true) * y_pred).
class CategoricalHinge : public Loss {
 public:
  explicit CategoricalHinge(const Json& c) : Loss(c, "categorical_hinge") { check_keys(c, "CategoricalHinge", {}); }
  std::string class_name() const override { return "CategoricalHinge"; }
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const Aligned a = align("CategoricalHinge", y_true, y_pred);
    check_broadcast("CategoricalHinge", a.y_true, a.y_pred);
    const Tensor pos = sum_last(mul(a.y_true, a.y_pred), a);
    const Tensor neg = max_last(mul(sub(scalar(1.f), a.y_true), a.y_pred), a);
    return maximum(add(sub(neg, pos), scalar(1.f)), 0.f);
  }
};

}  // namespace

LossPtr make_hinge(const Json& c) { return std::make_shared<HingeBase>(c, "Hinge", "hinge", false); }
LossPtr make_squared_hinge(const Json& c) { return std::make_shared<HingeBase>(c, "SquaredHinge", "squared_hinge", true); }
LossPtr make_categorical_hinge(const Json& c) { return std::make_shared<CategoricalHinge>(c); }

}  // namespace kerascpp::losses::detail
