// keras.callbacks.History (keras/src/callbacks/history.py): what fit returns.
#include "kerascpp/callbacks.h"

namespace kerascpp::callbacks {

// Keras 3 clears only the epoch list: `history` keeps growing across fit() calls on one instance.
void History::on_train_begin(Logs&) { epoch.clear(); }

void History::on_epoch_end(int e, Logs& logs) {
  epoch.push_back(e);
  for (const auto& [k, v] : logs.items()) {
    if (const std::vector<double>* a = logs.array(k)) {
      array_history[k].push_back(*a);
    } else {
      history[k].push_back(v);
    }
  }
}

}  // namespace kerascpp::callbacks
