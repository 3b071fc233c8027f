// keras.callbacks.LambdaCallback (keras/src/callbacks/lambda_callback.py): each hook given as a
// function; a hook left empty does nothing.
#include "kerascpp/callbacks.h"

namespace kerascpp::callbacks {

void LambdaCallback::on_epoch_begin(int epoch, Logs& logs) {
  if (on_epoch_begin_fn) on_epoch_begin_fn(epoch, logs);
}
void LambdaCallback::on_epoch_end(int epoch, Logs& logs) {
  if (on_epoch_end_fn) on_epoch_end_fn(epoch, logs);
}
void LambdaCallback::on_train_batch_begin(int64_t batch, Logs& logs) {
  if (on_batch_begin_fn) on_batch_begin_fn(batch, logs);
}
void LambdaCallback::on_train_batch_end(int64_t batch, Logs& logs) {
  if (on_batch_end_fn) on_batch_end_fn(batch, logs);
}
void LambdaCallback::on_train_begin(Logs& logs) {
  if (on_train_begin_fn) on_train_begin_fn(logs);
}
void LambdaCallback::on_train_end(Logs& logs) {
  if (on_train_end_fn) on_train_end_fn(logs);
}

}  // namespace kerascpp::callbacks
