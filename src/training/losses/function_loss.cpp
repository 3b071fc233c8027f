// A loss written as a function of keras.ops (losses::from_function): the traced graph gives the
// per-sample losses, recorded by the tape like any layer's ops.
#include "kerascpp/model.h"
#include "training/losses/loss_utils.h"

namespace kerascpp::losses {
namespace {

class FunctionLoss : public Loss {
 public:
  FunctionLoss(std::shared_ptr<const Model> function, const Json& config, const Json& serialized)
      : Loss(config, "loss"), function_(std::move(function)), serialized_(serialized) {
    KCPP_CHECK(function_ && function_->input_shapes().size() == 2 && function_->output_shapes().size() == 1, ValueError,
               "Loss '", name(), "': a loss function takes (y_true, y_pred) and gives one tensor of per-sample losses");
  }
  // Keras wraps a function in LossFunctionWrapper.
  std::string class_name() const override { return "LossFunctionWrapper"; }
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    const Tensor t = detail::as_float(traced_y_true(*function_, "Loss", name(), y_true, y_pred), name(), "y_true");
    return function_->graph().call({t, y_pred}, CallContext())[0];
  }
  Json serialize() const override { return serialized_; }

 private:
  std::shared_ptr<const Model> function_;
  Json serialized_;
};

}  // namespace

Tensor traced_y_true(const Model& function, const char* what, const std::string& name, const Tensor& y_true,
                     const Tensor& y_pred) {
  // A loss: squeeze_or_expand_to_same_rank (LossFunctionWrapper.call), on y_true only (y_pred is on the
  // tape): (n,) against (n, 1) becomes (n, 1), and (n, 1) against (n,) becomes (n,). A metric:
  // MeanMetricWrapper calls the function as it is (numpy broadcasting, which a trace cannot follow).
  Tensor t = y_true;
  const bool loss = what == std::string("Loss");
  if (!loss) {
  } else if (t.rank() + 1 == y_pred.rank() && y_pred.dim(-1) == 1) {
    Shape s = t.shape();
    s.push_back(1);
    t = t.reshape(s);
  } else if (t.rank() == y_pred.rank() + 1 && t.dim(-1) == 1) {
    t = t.reshape(Shape(t.shape().begin(), t.shape().end() - 1));
  }
  const char* roles[2] = {"y_true", "y_pred"};
  const Tensor* given[2] = {&t, &y_pred};
  for (int k = 0; k < 2; ++k) {
    const Shape& traced = function.input_shapes()[k];
    bool fits = given[k]->rank() == static_cast<int>(traced.size());
    for (size_t d = 1; fits && d < traced.size(); ++d) fits = traced[d] < 0 || traced[d] == given[k]->dim(static_cast<int>(d));
    KCPP_CHECK(fits, ValueError, what, " '", name, "' is a Python function traced for y_true and y_pred of shape ",
               shape_str(traced), " (the output's); ", roles[k], " has shape ",
               shape_str((k == 0 ? y_true : y_pred).shape()), ". Give labels of the output's shape, or use a built-in ",
               what == std::string("Loss") ? "loss" : "metric", " for other labels.");
  }
  return t;
}

LossPtr from_function(std::shared_ptr<const Model> function, const Json& config, const Json& serialized) {
  return std::make_shared<FunctionLoss>(std::move(function), config, serialized);
}

}  // namespace kerascpp::losses
