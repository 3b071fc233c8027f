// The overlap losses of keras/src/losses/losses.py, Dice and Tversky: one minus an overlap ratio of
// y_true and y_pred summed over `axis` (every axis by default, so the batch gives one value; a tuple
// such as (1, 2, 3) gives one per sample), after squeeze_or_expand_to_same_rank.
#include <algorithm>
#include <vector>

#include "training/losses/loss_classes.h"
#include "training/losses/loss_utils.h"

namespace kerascpp::losses::detail {
namespace {

class OverlapLoss : public Loss {
 public:
  OverlapLoss(const Json& c, const char* cls, const char* default_name, std::initializer_list<const char*> options)
      : Loss(c, default_name), cls_(cls) {
    check_keys(c, cls_, options);
    const Json axis = c.is_object() && c.contains("axis") ? c["axis"] : Json();
    if (axis.is_number_integer()) {
      axes_ = {axis.get<int>()};
    } else if (axis.is_array()) {
      for (const Json& a : axis) {
        KCPP_CHECK(a.is_number_integer(), ValueError, cls_, ": `axis` must be None, an integer or a tuple of integers. "
                   "Received: axis=", axis.dump());
        axes_.push_back(a.get<int>());
      }
    } else {
      KCPP_CHECK(axis.is_null(), ValueError, cls_, ": `axis` must be None, an integer or a tuple of integers. "
                 "Received: axis=", axis.dump());
      all_axes_ = true;
    }
    config_["axis"] = axis;  // as given: None, an integer or a list
  }
  std::string class_name() const override { return cls_; }
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const Aligned a = align(cls_, y_true, y_pred);
    check_broadcast(cls_, a.y_true, a.y_pred);
    return overlap_loss(a);
  }

 protected:
  virtual Tensor overlap_loss(const Aligned& a) const = 0;

  // ops.sum(x, axis=axis). With an implicit last axis (Keras's (batch, 1) y_pred) the axes count that
  // axis, whose sum is the identity.
  Tensor sum(const Tensor& x, const Aligned& a) const {
    if (all_axes_) return sum_all(x);
    const int rank = x.rank() + (a.implicit_last ? 1 : 0);
    std::vector<int> axes;
    for (int axis : axes_) {
      KCPP_CHECK(axis >= -rank && axis < rank, ValueError, cls_, ": axis ", axis, " is out of bounds for the ", rank,
                 "-d predictions of shape ", shape_str(a.y_pred.shape()));
      const int n = axis < 0 ? axis + rank : axis;
      if (!(a.implicit_last && n == rank - 1) && std::find(axes.begin(), axes.end(), n) == axes.end()) axes.push_back(n);
    }
    std::sort(axes.rbegin(), axes.rend());  // the highest first, so the lower ones keep their place
    Tensor out = x;
    for (int axis : axes) out = ops::sum(out, axis, false);
    return out;
  }

 private:
  std::string cls_;
  std::vector<int> axes_;
  bool all_axes_ = false;
};

// 1 - 2 sum(y_true y_pred) / (sum(y_true) + sum(y_pred) + epsilon)
class Dice : public OverlapLoss {
 public:
  explicit Dice(const Json& c) : OverlapLoss(c, "Dice", "dice", {"axis"}) {}

 protected:
  Tensor overlap_loss(const Aligned& a) const override {
    const Tensor intersection = sum(mul(a.y_true, a.y_pred), a);
    const Tensor denominator = add(add(sum(a.y_true, a), sum(a.y_pred, a)), scalar(kEpsilon));
    return sub(scalar(1.f), div(mul(scalar(2.f), intersection), denominator));
  }
};

// 1 - I / (I + alpha sum((1 - y_pred) y_true) + beta sum(y_pred (1 - y_true)) + epsilon), I = sum(y_true
// y_pred); alpha weighs the first sum and beta the second, as Keras's tversky() writes them.
class Tversky : public OverlapLoss {
 public:
  explicit Tversky(const Json& c) : OverlapLoss(c, "Tversky", "tversky", {"axis", "alpha", "beta"}) {
    alpha_ = static_cast<float>(number_option(c, "Tversky", "alpha", 0.5));
    beta_ = static_cast<float>(number_option(c, "Tversky", "beta", 0.5));
    config_["alpha"] = number_option(c, "Tversky", "alpha", 0.5);
    config_["beta"] = number_option(c, "Tversky", "beta", 0.5);
  }

 protected:
  Tensor overlap_loss(const Aligned& a) const override {
    const Tensor one = scalar(1.f);
    const Tensor intersection = sum(mul(a.y_true, a.y_pred), a);
    const Tensor first = sum(mul(sub(one, a.y_pred), a.y_true), a);
    const Tensor second = sum(mul(a.y_pred, sub(one, a.y_true)), a);
    const Tensor denominator =
        add(add(add(intersection, mul(first, scalar(alpha_))), mul(second, scalar(beta_))), scalar(kEpsilon));
    return sub(one, div(intersection, denominator));
  }

 private:
  float alpha_ = 0.5f, beta_ = 0.5f;
};

}  // namespace

LossPtr make_dice(const Json& c) { return std::make_shared<Dice>(c); }
LossPtr make_tversky(const Json& c) { return std::make_shared<Tversky>(c); }

}  // namespace kerascpp::losses::detail
