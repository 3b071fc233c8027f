// Keras's EpochIterator (keras/src/trainers/epoch_iterator.py) over a Dataset: the batches of each
// epoch, steps_per_epoch going on where the previous epoch stopped, a new pass when one has ended; and
// the next batch read ahead on an input thread while the engine computes on the current one.
// ArrayDataset is Keras's ArrayDataAdapter: arrays in batches, shuffled at each pass.
// One departure: where a pass ends exactly where an epoch begins (steps_per_epoch over data of unknown
// length), Keras gives that epoch no batch and restarts in the next; kerascpp restarts at once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "kerascpp/dataset.h"

namespace kerascpp::training {

class EpochIterator {
 public:
  // steps_per_epoch: 0 for a whole pass each epoch. read_ahead: fetch the next batch on a thread.
  EpochIterator(Dataset& data, int64_t steps_per_epoch, bool read_ahead);
  ~EpochIterator();
  EpochIterator(const EpochIterator&) = delete;
  EpochIterator& operator=(const EpochIterator&) = delete;

  // Steps of an epoch for the callbacks and the progress bar: steps_per_epoch, else the data's
  // batches (-1 while unknown).
  int64_t num_batches() const { return steps_ > 0 ? steps_ : known_; }
  // Dataset::on_epoch_begin, and a new pass where one is due.
  void begin_epoch();
  // The epoch's next batch, or nullopt at the epoch's end (Keras's warning where the data ran out
  // before steps_per_epoch). What the data throws passes through.
  std::optional<Batch> next();
  // Waits for a batch still being read (dropped: training stops), then Dataset::on_epoch_end.
  void end_epoch();
  // Keras's reset(), before fit's first epoch and before each evaluation: the next epoch starts a new
  // pass even with steps_per_epoch, and the data hears on_epoch_end (a PyDataset shuffles there).
  void reset();
  // The batches returned in this epoch.
  int64_t step() const { return step_; }
  // The data gave no batch at all at the start of a pass: it cannot feed another epoch.
  bool exhausted() const { return exhausted_; }

 private:
  bool wants_more() const { return (steps_ == 0 || step_ < steps_) && (known_ < 0 || seen_ < known_); }
  void request();
  std::optional<Batch> take();
  void read_loop();

  Dataset& data_;
  const int64_t steps_;
  int64_t known_;            // batches of a pass: the data's, or counted when a pass ends; -1 unknown
  bool pass_open_ = false;   // a pass is under way (steps_per_epoch goes on with it)
  int64_t seen_ = 0;         // batches read in this pass
  int64_t step_ = 0;         // batches returned in this epoch
  bool exhausted_ = false;
  bool warned_ = false;

  // The input thread: one read at a time, requested by the training thread.
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool wanted_ = false, ready_ = false, quit_ = false, pending_ = false;
  std::optional<Batch> result_;
  std::exception_ptr error_;
};

// Arrays as a Dataset (Keras's ArrayDataAdapter): batches of batch_size rows in order, or in an order
// shuffled by `rng` at the start of each pass.
class ArrayDataset : public Dataset {
 public:
  // Holds references: the arrays must outlive it.
  ArrayDataset(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const Tensor& sample_weight,
               int64_t batch_size, std::mt19937_64* shuffle_rng);
  ArrayDataset(const ArrayDataset&) = delete;
  ArrayDataset& operator=(const ArrayDataset&) = delete;
  int64_t num_batches() const override { return (n_ + batch_size_ - 1) / batch_size_; }
  void begin_pass() override;
  std::optional<Batch> next() override;

 private:
  const std::vector<Tensor>& x_;
  const std::vector<Tensor>& y_;
  const Tensor& sw_;
  const int64_t batch_size_, n_;
  std::mt19937_64* rng_;
  std::vector<int64_t> order_;
  int64_t start_ = 0;
};

}  // namespace kerascpp::training
