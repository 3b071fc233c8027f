// What model.compile() sets up, and the train / test steps that use it (train_step.cpp). fit.cpp
// drives them over batches and epochs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/mapping_cache.h"
#include "kerascpp/model.h"
#include "layers/constraints.h"
#include "layers/regularizers.h"

namespace kerascpp::training {

struct Compiled {
  optimizers::OptimizerPtr optimizer;
  // The weights training updates, taken at the first train step after compile and kept until the next
  // compile, as Keras 3 does (a layer frozen after that trains on until the model is compiled again).
  std::vector<VariablePtr> trainable;
  bool trainable_taken = false;
  std::vector<losses::LossPtr> losses;                  // one per model output; null: none
  std::vector<double> loss_weights;                     // one per model output
  struct OutputMetric {
    metrics::MetricPtr metric;
    std::string log_name;  // "<output>_<name>" when the model has several outputs; unique in the logs
    bool weighted = false;  // compile(weighted_metrics=...): updated with the sample weights
  };
  std::vector<std::vector<OutputMetric>> metrics;  // per model output: its metrics, then its weighted ones
  std::vector<std::pair<VariablePtr, layers::Regularizer>> weight_regularizers;  // kernel_regularizer...
  std::vector<std::pair<VariablePtr, layers::Constraint>> weight_constraints;    // after each update
  metrics::Mean loss_tracker{"loss"};
  std::vector<metrics::Mean> output_loss_trackers;  // per output, multi-output models only
  bool integer_ids = false;  // the model reads integer ids (models::reads_integer_ids), found at compile
  // The big tensors a train or test step frees, kept for the next step's (core/mapping_cache.h): fit,
  // evaluate, train_on_batch and test_on_batch run with it on their thread. Held until the next compile.
  std::shared_ptr<MappingCache> pages = std::make_shared<MappingCache>(MappingCache::kDefaultBytes);
};

// Compiled::trainable, taken now when it was not yet since compile.
const std::vector<VariablePtr>& trainable_weights(const Model& model, Compiled& c);

using kerascpp::Batch;  // kerascpp/dataset.h
class Replicas;  // training/distribute/replicas.h

// One gradient step: forward in training mode under a tape, loss, gradients, optimizer update,
// layer state updates, then the loss tracker and metrics. Returns false (and changes no weight)
// when the loss is not finite; the trackers then hold that NaN / inf.
// states: the stateful RNN layers' (null when the model has none). replicas: data-parallel training's
// workers (batch is then the global batch, of which this worker computes its rows); false also when
// replicas->stopped().
bool train_step(Model& model, Compiled& c, const Batch& batch, uint64_t seed, RnnStates* states = nullptr,
                Replicas* replicas = nullptr);
// The same forward and loss in inference mode, updating the trackers only.
void test_step(const Model& model, Compiled& c, const Batch& batch, RnnStates* states = nullptr,
               Replicas* replicas = nullptr);
// The trackers' results as Keras's logs ("loss", per-output losses, metrics), and their reset.
Logs results(const Compiled& c, const std::string& prefix = "");
void reset(Compiled& c);

// The rows `indices` of t (a copy), or rows [start, start + count) (a view) when indices is null.
Tensor take_rows(const Tensor& t, const std::vector<int64_t>* indices, int64_t start, int64_t count);

}  // namespace kerascpp::training
