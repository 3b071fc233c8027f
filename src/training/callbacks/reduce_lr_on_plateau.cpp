// keras.callbacks.ReduceLROnPlateau, as keras/src/callbacks/reduce_lr_on_plateau.py (Keras 3.15).
// The decision itself is detail::plateau_step (monitor_callback.cpp).
#include <ostream>

#include "kerascpp/error.h"
#include "kerascpp/model.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {

ReduceLROnPlateau::ReduceLROnPlateau(const Json& kwargs) {
  const std::string cls = "ReduceLROnPlateau";
  detail::check_kwargs(cls, kwargs,
                       {"monitor", "factor", "patience", "verbose", "mode", "min_delta", "cooldown", "min_lr"});
  monitor_ = detail::str_arg(cls, kwargs, "monitor", "val_loss");
  factor_ = detail::num_arg(cls, kwargs, "factor", 0.1);
  KCPP_CHECK(factor_ < 1.0, ValueError, "ReduceLROnPlateau does not support a factor >= 1.0. Received factor=",
             kwargs.at("factor").dump());
  patience_ = detail::int_arg(cls, kwargs, "patience", 10);
  verbose_ = detail::int_arg(cls, kwargs, "verbose", 0);
  bool mode_warned = false;
  mode_ = detail::checked_mode(cls, detail::str_arg(cls, kwargs, "mode", "auto"), mode_warned);
  min_delta_ = detail::num_arg(cls, kwargs, "min_delta", 1e-4);
  cooldown_ = detail::int_arg(cls, kwargs, "cooldown", 0);
  min_lr_ = detail::num_arg(cls, kwargs, "min_lr", 0.0);
}

void ReduceLROnPlateau::on_train_begin(Logs&) {
  best_.reset();
  cooldown_counter_ = 0;
  wait_ = 0;
}

void ReduceLROnPlateau::on_epoch_end(int epoch, Logs& logs) {
  if (!op_set_) {
    greater_ = detail::monitor_greater("ReduceLROnPlateau", monitor_, mode_);
    op_set_ = true;
  }
  KCPP_CHECK(model() != nullptr, ValueError, "ReduceLROnPlateau has no model: call set_model() first.");
  optimizers::OptimizerPtr opt = model()->optimizer();
  KCPP_CHECK(opt != nullptr, ValueError,
             "ReduceLROnPlateau needs a compiled model: the model has no optimizer. Call model.compile() first.");
  // Keras 3 logs the rate before deciding, so "learning_rate" is in the epoch's logs (History, CSV).
  double lr = opt->learning_rate();
  logs.set("learning_rate", lr);
  std::optional<double> current = logs.get(monitor_);
  if (!current) {
    detail::warn_once(warned_, "Learning rate reduction is conditioned on metric `" + monitor_ +
                                   "` which is not available. Available metrics are: " + detail::join_keys(logs) +
                                   ".");
    return;
  }
  detail::PlateauSettings s{factor_, min_delta_, min_lr_, patience_, cooldown_, greater_};
  detail::PlateauState st{best_, wait_, cooldown_counter_};
  std::optional<double> new_lr = detail::plateau_step(s, st, *current, lr);
  best_ = st.best, wait_ = st.wait, cooldown_counter_ = st.cooldown_counter;
  if (!new_lr) return;
  opt->set_learning_rate(*new_lr);  // ValueError for a schedule, as Keras
  if (verbose_ > 0)
    detail::msg_out() << "\nEpoch " << epoch + 1 << ": ReduceLROnPlateau reducing learning rate to "
                      << detail::python_float_repr(*new_lr) << "." << std::endl;
}

}  // namespace kerascpp::callbacks
