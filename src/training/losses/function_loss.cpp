// A loss written as a function of keras.ops (losses::from_function): the traced graph gives the
// per-sample losses, recorded by the tape like any layer's ops.
#include "kerascpp/model.h"
#include "training/losses/loss_utils.h"

namespace kerascpp::losses {
namespace {

class FunctionLoss : public Loss {
 public:
  FunctionLoss(std::shared_ptr<const Model> function, const Json& config, const Json& serialized, Retrace retrace)
      : Loss(config, "loss"), traces_(std::move(function), std::move(retrace), "Loss", name()), serialized_(serialized) {}
  // Keras wraps a function in LossFunctionWrapper.
  std::string class_name() const override { return "LossFunctionWrapper"; }
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override {
    auto [function, aligned] = traces_.for_batch(y_true, y_pred);
    const Tensor t = detail::as_float(aligned, name(), "y_true");
    return function->graph().call({t, y_pred}, CallContext())[0];
  }
  Json serialize() const override { return serialized_; }

 private:
  FunctionTraces traces_;
  Json serialized_;
};

// Whether `t` has the shape a function input was traced for (any batch size).
bool fits(const Shape& traced, const Tensor& t) {
  bool ok = t.rank() == static_cast<int>(traced.size());
  for (size_t d = 1; ok && d < traced.size(); ++d) ok = traced[d] < 0 || traced[d] == t.dim(static_cast<int>(d));
  return ok;
}

}  // namespace

FunctionTraces::FunctionTraces(std::shared_ptr<const Model> first, Retrace retrace, const char* what, std::string name)
    : first_(std::move(first)), retrace_(std::move(retrace)), what_(what), name_(std::move(name)) {
  KCPP_CHECK(first_ && first_->input_shapes().size() == 2 && first_->output_shapes().size() == 1, ValueError, what_,
             " '", name_, "': a ", what_ == std::string("Loss") ? "loss" : "metric",
             " function takes (y_true, y_pred) and gives one tensor");
}

std::pair<std::shared_ptr<const Model>, Tensor> FunctionTraces::for_batch(const Tensor& y_true,
                                                                           const Tensor& y_pred) const {
  // A loss: squeeze_or_expand_to_same_rank (LossFunctionWrapper.call), on y_true only (y_pred is on the
  // tape): (n,) against (n, 1) becomes (n, 1), and (n, 1) against (n,) becomes (n,). A metric:
  // MeanMetricWrapper calls the function as it is.
  Tensor t = y_true;
  if (what_ == std::string("Loss")) {
    if (t.rank() + 1 == y_pred.rank() && y_pred.dim(-1) == 1) {
      Shape s = t.shape();
      s.push_back(1);
      t = t.reshape(s);
    } else if (t.rank() == y_pred.rank() + 1 && t.dim(-1) == 1) {
      t = t.reshape(Shape(t.shape().begin(), t.shape().end() - 1));
    }
  }
  const Shape& traced_pred = first_->input_shapes()[1];
  KCPP_CHECK(fits(traced_pred, y_pred), ValueError, what_, " '", name_, "' is a Python function traced for y_pred of "
             "shape ", shape_str(traced_pred), " (the output's); y_pred has shape ", shape_str(y_pred.shape()), ".");
  if (fits(first_->input_shapes()[0], t)) return {first_, t};
  // The shape to trace for: y_true's, None where the batch is and where the output's traced shape has
  // None at the same place (a sequence length), so that one trace serves every length (Keras's
  // reduce_retracing).
  Shape key = t.shape();
  for (size_t d = 0; d < key.size(); ++d)
    if (d == 0 || (d < traced_pred.size() && traced_pred[d] < 0)) key[d] = -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = retraced_.find(key); it != retraced_.end()) return {it->second, t};
  }
  KCPP_CHECK(retrace_, ValueError, what_, " '", name_, "' is a Python function traced for y_true of shape ",
             shape_str(first_->input_shapes()[0]), "; y_true has shape ", shape_str(y_true.shape()),
             ". Give labels of that shape, or use a built-in ", what_ == std::string("Loss") ? "loss" : "metric",
             " for other labels.");
  // Traced without the lock held: the Python package takes the GIL, which a caller holding the GIL
  // may be waiting to give up while it waits for this lock.
  std::shared_ptr<const Model> traced = retrace_(key);
  KCPP_CHECK(traced && traced->input_shapes().size() == 2 && fits(traced->input_shapes()[0], t), ValueError, what_,
             " '", name_, "': tracing it again for y_true of shape ", shape_str(key), " gave no function of that shape.");
  std::lock_guard<std::mutex> lock(mutex_);
  return {retraced_.emplace(key, traced).first->second, t};  // a trace made meanwhile by another thread wins
}

LossPtr from_function(std::shared_ptr<const Model> function, const Json& config, const Json& serialized, Retrace retrace) {
  return std::make_shared<FunctionLoss>(std::move(function), config, serialized, std::move(retrace));
}

}  // namespace kerascpp::losses
