// keras.callbacks.TerminateOnNaN (keras/src/callbacks/terminate_on_nan.py), graceful form: sets
// model.stop_training, so every callback still sees on_train_end.
#include <cmath>
#include <ostream>

#include "kerascpp/model.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {

// Keras 3's TerminateOnNaN overrides on_batch_end, which on_train_batch_end calls.
void TerminateOnNaN::on_train_batch_end(int64_t batch, Logs& logs) {
  std::optional<double> loss = logs.get("loss");
  if (!loss || std::isfinite(*loss)) return;
  detail::msg_out() << "Batch " << batch << ": Invalid loss, terminating training" << std::endl;
  if (model()) model()->stop_training = true;
}

}  // namespace kerascpp::callbacks
