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
    check_traced_shapes(*function_, "Loss", name(), y_true, y_pred);
    const Tensor t = detail::as_float(y_true, name(), "y_true");
    return function_->graph().call({t, y_pred}, CallContext())[0];
  }
  Json serialize() const override { return serialized_; }

 private:
  std::shared_ptr<const Model> function_;
  Json serialized_;
};

}  // namespace

void check_traced_shapes(const Model& function, const char* what, const std::string& name, const Tensor& y_true,
                         const Tensor& y_pred) {
  const char* roles[2] = {"y_true", "y_pred"};
  const Tensor* given[2] = {&y_true, &y_pred};
  for (int k = 0; k < 2; ++k) {
    const Shape& traced = function.input_shapes()[k];
    bool fits = given[k]->rank() == static_cast<int>(traced.size());
    for (size_t d = 1; fits && d < traced.size(); ++d) fits = traced[d] < 0 || traced[d] == given[k]->dim(static_cast<int>(d));
    KCPP_CHECK(fits, ValueError, what, " '", name, "' is a Python function traced for y_true and y_pred of shape ",
               shape_str(traced), " (the output's); ", roles[k], " has shape ", shape_str(given[k]->shape()),
               ". Give labels of the output's shape, or use a built-in ", what == std::string("Loss") ? "loss" : "metric",
               " for other labels.");
  }
}

LossPtr from_function(std::shared_ptr<const Model> function, const Json& config, const Json& serialized) {
  return std::make_shared<FunctionLoss>(std::move(function), config, serialized);
}

}  // namespace kerascpp::losses
