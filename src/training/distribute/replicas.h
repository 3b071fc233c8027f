// The data-parallel side of fit and evaluate (kerascpp/distribute.h; Horovod's recipe, which is what
// MultiWorkerMirroredStrategy does for Keras):
//   - at the start, every worker checks it has the same model as the chief, then takes the chief's
//     weights, optimizer state, first epoch and shuffling seed;
//   - every worker reads the same global batches and computes on its own rows of each (rank r of N takes
//     rows [n*r/N, n*(r+1)/N): the first workers get one row fewer when N does not divide n);
//   - the gradients of the workers' mean losses, each weighted by its share of the rows, are summed in
//     one fused buffer, so that every worker applies the gradient of the global batch's mean loss;
//     layer updates (BatchNormalization's moving statistics, computed on each worker's own rows as Keras's
//     per-replica statistics) are averaged in the same buffer;
//   - the loss trackers' and metrics' accumulators are summed before the logs are read, so that every
//     callback decides the same on every worker.
// With no context (or one worker) every call leaves things as they are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kerascpp/distribute.h"
#include "training/compiled.h"

namespace kerascpp::training {

class Replicas {
 public:
  explicit Replicas(DistributedContext* context = nullptr) : ctx_(context) {}
  bool active() const { return ctx_ && ctx_->world_size() > 1; }
  bool chief() const { return !ctx_ || ctx_->is_chief(); }

  // ValueError on every worker when one worker's model (weights; c's losses and logged metrics when
  // given, and its optimizer's variables with `optimizer`) differs from the chief's, naming the worker; NotImplementedError for
  // what cannot train data-parallel (stateful RNN layers).
  void check_same_model(const Model& model, const Compiled* c, const char* what, bool optimizer);
  // The chief's value of a seed (shuffling).
  uint64_t chief_seed(uint64_t own);
  // A step's seed for this worker's rows (dropout and noise draw afresh on each worker).
  uint64_t worker_seed(uint64_t step_seed) const {
    return active() ? step_seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(ctx_->rank())) : step_seed;
  }
  // The chief's weights and optimizer state (built), and its first epoch (BackupAndRestore's), everywhere.
  void take_chief_state(const Model& model, Compiled& c, int* first_epoch);
  // The chief's weights alone (evaluate).
  void take_chief_weights(const Model& model);

  // A pass of fit's epoch or of an evaluation begins: the trackers were reset.
  void begin_pass() { sized_ = false; }
  // This worker's rows of a global batch (all of them with one worker).
  Batch local(const Batch& global);

  // One training step's exchange, in one all-reduce: sums the workers' gradients (each weighted by
  // rows / global_rows), averages their layer updates, sums the trackers' accumulators, and carries
  // each worker's stop request (set_stop_request) and whether its loss was finite. In place; false when
  // the step is not applied: the loss was not finite on some worker, or some worker asked to stop
  // after the previous batch (stopped(): this step's tracking is then undone, as if it never ran).
  // grads: undefined where the loss does not reach a variable, or all undefined on a worker without
  // rows. tracked_before: the trackers' accumulators before this step tracked (trackers(c)).
  bool reduce(Compiled& c, std::vector<Tensor>* grads, const std::vector<VariablePtr>& trainable,
              std::vector<std::pair<VariablePtr, Tensor>>* updates, int64_t rows, int64_t global_rows, bool finite,
              const std::vector<double>& tracked_before);
  void set_stop_request(bool stop) { stop_request_ = stop; }
  bool stopped() const { return stopped_; }
  // The trackers' accumulators, in a fixed order.
  static std::vector<double> trackers(Compiled& c);
  // The logs of the last step's summed trackers (those reduce exchanged, else summed now).
  Logs step_logs(Compiled& c);
  // The trackers' results, their accumulators summed over the workers (Keras's metric variables).
  Logs results(Compiled& c);
  // True on every worker when it is true on any (stop_training).
  bool any(bool flag);

 private:
  void take(const std::vector<VariablePtr>& vars, int* first_epoch);

  DistributedContext* ctx_;
  bool layout_known_ = false;
  std::vector<VariablePtr> update_layout_;  // the variables the layers update, learnt at the first step
  std::vector<float> buffer_;
  // Every worker has tracked rows since the pass began, so that their trackers' accumulators have the
  // same sizes (AUC, F1Score take theirs from the first batch): the step's exchange can then carry them.
  bool sized_ = false;
  bool stop_request_ = false, stopped_ = false;
  std::optional<Logs> step_logs_;
};

}  // namespace kerascpp::training
