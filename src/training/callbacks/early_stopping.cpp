// keras.callbacks.EarlyStopping, as keras/src/callbacks/early_stopping.py (Keras 3.15).
#include <cmath>
#include <ostream>

#include "kerascpp/error.h"
#include "kerascpp/model.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {

EarlyStopping::EarlyStopping(const Json& kwargs) {
  const std::string cls = "EarlyStopping";
  detail::check_kwargs(cls, kwargs, {"monitor", "min_delta", "patience", "verbose", "mode", "baseline",
                                     "restore_best_weights", "start_from_epoch"});
  monitor_ = detail::str_arg(cls, kwargs, "monitor", "val_loss");
  bool mode_warned = false;
  mode_ = detail::checked_mode(cls, detail::str_arg(cls, kwargs, "mode", "auto"), mode_warned);
  min_delta_ = std::fabs(detail::num_arg(cls, kwargs, "min_delta", 0));
  patience_ = detail::int_arg(cls, kwargs, "patience", 0);
  verbose_ = detail::int_arg(cls, kwargs, "verbose", 0);
  baseline_ = detail::opt_num_arg(cls, kwargs, "baseline");
  restore_best_weights_ = detail::bool_arg(cls, kwargs, "restore_best_weights", false);
  start_from_epoch_ = detail::int_arg(cls, kwargs, "start_from_epoch", 0);
}

// Resets everything so that one instance serves several fit() calls, as Keras. The monitor's
// direction is kept: Keras sets monitor_op once.
void EarlyStopping::on_train_begin(Logs&) {
  wait_ = 0;
  stopped_epoch_ = 0;
  best_.reset();
  best_weights_.clear();
  best_epoch_ = 0;
}

void EarlyStopping::on_epoch_end(int epoch, Logs& logs) {
  if (!op_set_) {  // Keras delays this until the model's metrics are built
    greater_ = detail::monitor_greater("EarlyStopping", monitor_, mode_);
    op_set_ = true;
  }
  std::optional<double> current = logs.get(monitor_);
  if (!current)
    detail::warn_once(warned_, "Early stopping conditioned on metric `" + monitor_ +
                                   "` which is not available. Available metrics are: " + detail::join_keys(logs));
  if (!current || epoch < start_from_epoch_) return;
  KCPP_CHECK(model() != nullptr, ValueError, "EarlyStopping has no model: call set_model() first.");
  // With no improvement ever seen, the weights of the first monitored epoch are the best.
  if (restore_best_weights_ && best_weights_.empty()) {
    best_weights_ = model()->get_weights();
    best_epoch_ = epoch;
  }
  wait_ += 1;
  if (detail::is_improvement(*current, best_, greater_, min_delta_)) {
    best_ = *current;
    best_epoch_ = epoch;
    if (restore_best_weights_) best_weights_ = model()->get_weights();
    // The wait restarts only when the value beats both the previous best and the baseline.
    if (!baseline_ || detail::is_improvement(*current, baseline_, greater_, min_delta_)) wait_ = 0;
    return;
  }
  // Keras never stops at epoch 0 (`epoch > 0`), even with patience 0.
  if (wait_ >= patience_ && epoch > 0) {
    stopped_epoch_ = epoch;
    model()->stop_training = true;
  }
}

// Keras 3 restores the best weights at the end of training whether or not it stopped early.
void EarlyStopping::on_train_end(Logs&) {
  if (stopped_epoch_ > 0 && verbose_ > 0)
    detail::msg_out() << "Epoch " << stopped_epoch_ + 1 << ": early stopping" << std::endl;
  if (restore_best_weights_ && !best_weights_.empty()) {
    if (verbose_ > 0)
      detail::msg_out() << "Restoring model weights from the end of the best epoch: " << best_epoch_ + 1 << "."
                        << std::endl;
    model()->set_weights(best_weights_);
  }
}

}  // namespace kerascpp::callbacks
