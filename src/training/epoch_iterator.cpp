#include "training/epoch_iterator.h"

#include <algorithm>
#include <numeric>

#include "kerascpp/warnings.h"
#include "training/compiled.h"

namespace kerascpp::training {
namespace {
void warn_ran_out() {
  warn("Your input ran out of data; interrupting training. Make sure that your dataset or generator can generate at "
       "least `steps_per_epoch * epochs` batches. You may need to use the `.repeat()` function when building your "
       "dataset.");
}
}  // namespace

EpochIterator::EpochIterator(Dataset& data, int64_t steps_per_epoch, bool read_ahead)
    : data_(data), steps_(steps_per_epoch), known_(data.num_batches()) {
  KCPP_CHECK(steps_ >= 0, ValueError, "Expected a non-negative number of steps. Received: steps=", steps_);
  KCPP_CHECK(known_ >= -1, ValueError, "Dataset::num_batches() must be -1 (unknown) or a count. Received: ", known_);
  if (read_ahead) reader_ = std::thread([this] { read_loop(); });
}

EpochIterator::~EpochIterator() {
  if (!reader_.joinable()) return;
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !pending_ || ready_; });  // never leave a read running on the dataset
    quit_ = true;
  }
  cv_.notify_all();
  reader_.join();
}

void EpochIterator::read_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return wanted_ || quit_; });
    if (quit_) return;
    wanted_ = false;
    lock.unlock();
    std::optional<Batch> b;
    std::exception_ptr e;
    try {
      b = data_.next();
    } catch (...) {
      e = std::current_exception();
    }
    lock.lock();
    result_ = std::move(b);
    error_ = e;
    ready_ = true;
    cv_.notify_all();
  }
}

void EpochIterator::request() {
  if (!reader_.joinable() || pending_ || !wants_more()) return;
  {
    std::lock_guard lock(mu_);
    wanted_ = true;
    pending_ = true;
  }
  cv_.notify_all();
}

std::optional<Batch> EpochIterator::take() {
  if (!pending_) return data_.next();
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return ready_; });
  ready_ = pending_ = false;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  return std::move(result_);
}

void EpochIterator::reset() {
  pass_open_ = false;
  data_.on_epoch_end();
}

void EpochIterator::begin_epoch() {
  data_.on_epoch_begin();
  step_ = 0;
  warned_ = false;
  if (!pass_open_ || steps_ == 0) {
    data_.begin_pass();
    pass_open_ = true;
    seen_ = 0;
  }
  if (known_ == 0) {  // a dataset of no batches (an empty PyDataset, a tf.data of cardinality 0)
    exhausted_ = true;
    warned_ = true;
    warn_ran_out();
  }
  request();
}

std::optional<Batch> EpochIterator::next() {
  if (!wants_more()) {
    if (steps_ > 0 && step_ < steps_ && !std::exchange(warned_, true)) warn_ran_out();
    return std::nullopt;
  }
  std::optional<Batch> b = take();
  if (!b && step_ == 0 && seen_ > 0) {  // the pass ended where this epoch starts: a new one (Keras: an empty epoch)
    if (known_ < 0) known_ = seen_;
    data_.begin_pass();
    seen_ = 0;
    b = take();
  }
  if (!b) {  // the pass has ended: its length is known now, if it was not declared
    if (known_ < 0) known_ = seen_;
    exhausted_ = seen_ == 0;
    pass_open_ = false;
    if ((steps_ > 0 || exhausted_) && !std::exchange(warned_, true)) warn_ran_out();
    return std::nullopt;
  }
  ++seen_;
  ++step_;
  request();
  return b;
}

void EpochIterator::end_epoch() {
  if (pending_) {  // training stopped within the epoch: that batch is not used, nor what reading it threw
    try {
      (void)take();
    } catch (...) {
    }
  }
  if (known_ >= 0 && seen_ >= known_) pass_open_ = false;
  data_.on_epoch_end();
}

ArrayDataset::ArrayDataset(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const Tensor& sample_weight,
                           int64_t batch_size, std::mt19937_64* shuffle_rng)
    : x_(x), y_(y), sw_(sample_weight), batch_size_(batch_size), n_(x.empty() ? 0 : x[0].dim(0)), rng_(shuffle_rng) {
  KCPP_CHECK(batch_size > 0, ValueError, "Expected a positive batch_size. Received: batch_size=", batch_size);
  if (rng_) {
    order_.resize(n_);
    std::iota(order_.begin(), order_.end(), 0);
  }
}

void ArrayDataset::begin_pass() {
  start_ = 0;
  if (rng_) std::shuffle(order_.begin(), order_.end(), *rng_);
}

std::optional<Batch> ArrayDataset::next() {
  if (start_ >= n_) return std::nullopt;
  const int64_t count = std::min(batch_size_, n_ - start_);
  const std::vector<int64_t>* order = rng_ ? &order_ : nullptr;
  Batch b;
  for (const Tensor& t : x_) b.x.push_back(take_rows(t, order, start_, count));
  for (const Tensor& t : y_) b.y.push_back(take_rows(t, order, start_, count));
  if (sw_.defined()) b.sample_weight = take_rows(sw_, order, start_, count);
  start_ += count;
  return b;
}

}  // namespace kerascpp::training
