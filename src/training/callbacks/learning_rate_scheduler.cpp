// keras.callbacks.LearningRateScheduler, as keras/src/callbacks/learning_rate_scheduler.py.
#include <ostream>

#include "kerascpp/error.h"
#include "kerascpp/model.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {
namespace {
optimizers::Optimizer& optimizer_of(const Callback& cb) {
  KCPP_CHECK(cb.model() != nullptr, ValueError, "LearningRateScheduler has no model: call set_model() first.");
  optimizers::OptimizerPtr opt = cb.model()->optimizer();
  KCPP_CHECK(opt != nullptr, ValueError, "Optimizer must have a \"learning_rate\" attribute.");
  return *opt;
}
}  // namespace

LearningRateScheduler::LearningRateScheduler(std::function<double(int, double)> schedule, int verbose)
    : schedule_(std::move(schedule)), verbose_(verbose) {
  KCPP_CHECK(schedule_ != nullptr, ValueError, "LearningRateScheduler needs a schedule function.");
}

// The schedule sees the rate as the optimizer holds it (a float32 variable read as a double).
void LearningRateScheduler::on_epoch_begin(int epoch, Logs&) {
  optimizers::Optimizer& opt = optimizer_of(*this);
  double lr = schedule_(epoch, opt.learning_rate());
  opt.set_learning_rate(lr);
  if (verbose_ > 0)
    detail::msg_out() << "\nEpoch " << epoch + 1 << ": LearningRateScheduler setting learning rate to "
                      << detail::python_float_repr(lr) << "." << std::endl;
}

void LearningRateScheduler::on_epoch_end(int, Logs& logs) {
  logs.set("learning_rate", optimizer_of(*this).learning_rate());
}

}  // namespace kerascpp::callbacks
