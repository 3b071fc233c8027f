// Dataset: the batches that fit / evaluate / predict read when the data is not one set of arrays in
// memory (Keras's PyDataset and Sequence, a generator, a tf.data.Dataset: the Python package adapts
// each of them to this class). fit reads the next batch on its input thread while the engine trains on
// the current one, so an epoch costs about max(input, compute), not their sum.
//
//   class Shards : public kerascpp::Dataset {
//    public:
//     int64_t num_batches() const override { return 100; }
//     void begin_pass() override { next_ = 0; }
//     std::optional<kerascpp::Batch> next() override {
//       if (next_ == 100) return std::nullopt;
//       return read_shard(next_++);  // {{x}, {y}}
//     }
//    private:
//     int64_t next_ = 0;
//   };
//   Shards data;
//   model.fit(data, {.epochs = 10});
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kerascpp/tensor.h"

namespace kerascpp {

// One batch: a tensor per model input (x) and per output (y; none for predict), samples on axis 0.
struct Batch {
  std::vector<Tensor> x, y;
  Tensor sample_weight;  // undefined: every sample weighs 1
};

// A source of batches, read one pass at a time (Keras's data adapters). Its methods are called by one
// thread at a time, never two at once: next() mostly from fit's input thread, everything else (and
// next() where a read cannot be ahead) from the thread that called fit.
class Dataset {
 public:
  virtual ~Dataset() = default;
  // The batches of one pass; -1 when unknown until the pass ends (a generator).
  virtual int64_t num_batches() const { return -1; }
  // Starts a pass over the data: the next next() is its first batch. fit starts one before its first
  // epoch and whenever the previous pass has ended (num_batches batches read, or next() gave nothing);
  // with FitOptions::steps_per_epoch an epoch goes on where the previous one stopped, as in Keras.
  // evaluate and predict start one pass each. A source that cannot start again (a generator) goes on.
  virtual void begin_pass() = 0;
  // The pass's next batch, or std::nullopt when it has ended. An exception stops fit with the weights
  // as they were before this batch; kerascpp's own errors gain the batch's place in their message,
  // other exceptions pass through unchanged.
  virtual std::optional<Batch> next() = 0;
  // Keras's PyDataset.on_epoch_begin / on_epoch_end, around each epoch of fit and each evaluation;
  // on_epoch_end also before the first epoch, as Keras's fit does (shuffle there).
  virtual void on_epoch_begin() {}
  virtual void on_epoch_end() {}
};

}  // namespace kerascpp
