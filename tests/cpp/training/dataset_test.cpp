// fit / evaluate / predict fed by a Dataset: the same numbers as the same batches given as arrays,
// steps_per_epoch going on where the previous epoch stopped (Keras's EpochIterator), validation_freq,
// reading on the input thread, and data that raises, has the wrong shape or ends early. The Python
// tests check the same against real Keras (tests/python/test_fit_data.py).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "fixture_json.h"
#include "io/npy/npy.h"
#include "kerascpp/model.h"
#include "kerascpp/warnings.h"

namespace kerascpp {
namespace {

struct Data {
  Model model;
  std::vector<Tensor> x, y;
};

Data mlp() {  // 64 samples
  const std::string dir = testing::fixture("training/mlp_adam/");
  return {load_model(dir + "model.keras"), {io::read_npy(dir + "x.npy")}, {io::read_npy(dir + "y.npy")}};
}

// Batches of 10 rows of x / y; records what was read, on which thread. `limit`: batches in all (a
// generator that runs out: every pass goes on with the same stream); `fail_at` throws at that read.
class Rows : public Dataset {
 public:
  Rows(const Data& d, int64_t limit = -1) : d_(d), limit_(limit) {}
  int64_t num_batches() const override { return limit_ < 0 ? (d_.x[0].dim(0) + 9) / 10 : -1; }
  void begin_pass() override {
    ++passes;
    if (limit_ < 0) next_ = 0;
  }
  std::optional<Batch> next() override {
    readers.push_back(std::this_thread::get_id());
    if (reads++ == fail_at) throw std::runtime_error("disk gone");
    const int64_t n = d_.x[0].dim(0);
    if ((limit_ >= 0 && next_ >= limit_) || (limit_ < 0 && next_ * 10 >= n)) return std::nullopt;
    const int64_t start = (next_ * 10) % n, count = std::min<int64_t>(10, n - start);
    read.push_back(next_++);
    Batch b{{d_.x[0].slice(start, count)}, {d_.y[0].slice(start, count)}, Tensor()};
    if (read.size() == static_cast<size_t>(bad_at + 1)) b.x[0] = Tensor::zeros({count, 3});
    return b;
  }
  void on_epoch_end() override { ++epochs_ended; }

  std::vector<int64_t> read;
  std::vector<std::thread::id> readers;
  int passes = 0, epochs_ended = 0;
  std::atomic<int64_t> reads{0};  // counted before a read: the training thread waits on it
  int64_t fail_at = -1, bad_at = -1;

 private:
  const Data& d_;
  int64_t limit_, next_ = 0;
};

FitOptions quiet(int epochs = 1) {
  FitOptions o;
  o.epochs = epochs, o.verbose = 0, o.shuffle = false, o.batch_size = 10, o.seed = 1;
  return o;
}

std::vector<std::string> warnings_of(const std::function<void()>& f) {
  std::vector<std::string> got;
  WarningSink previous = set_warning_sink([&](const std::string& m) { got.push_back(m); });
  try {
    f();
  } catch (...) {
    set_warning_sink(previous);
    throw;
  }
  set_warning_sink(previous);
  return got;
}

// A callback that keeps the weights after each batch.
callbacks::CallbackPtr keep_weights(const Model& m, std::vector<Tensor>* out) {
  auto cb = std::make_shared<callbacks::LambdaCallback>();
  cb->on_batch_end_fn = [&m, out](int64_t, Logs&) { *out = m.get_weights(); };
  return cb;
}

void expect_same(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t k = 0; k < a[i].size(); ++k) ASSERT_EQ(a[i].data<float>()[k], b[i].data<float>()[k]) << i << "," << k;
}

TEST(FitDataset, SameNumbersAsTheSameBatchesFromArrays) {
  Data a = mlp(), b = mlp();
  FitOptions o = quiet(3);
  o.validation_x = {a.x[0].slice(0, 20)}, o.validation_y = {a.y[0].slice(0, 20)};
  const auto from_arrays = a.model.fit(a.x, a.y, o);
  Rows rows(b);
  const auto from_data = b.model.fit(rows, o);
  EXPECT_EQ(from_data->history, from_arrays->history);
  expect_same(b.model.get_weights(), a.model.get_weights());
  EXPECT_EQ(rows.passes, 3);
  EXPECT_EQ(rows.epochs_ended, 4);  // before the first epoch too, as Keras's fit calls reset()
  EvaluateOptions e;
  e.verbose = 0, e.batch_size = 10;
  Rows again(b);
  EXPECT_EQ(b.model.evaluate(again, e).items(), b.model.evaluate(b.x, b.y, e).items());
  Rows for_predict(b);
  expect_same(b.model.predict(for_predict), b.model.predict(b.x, 10));
}

TEST(FitDataset, ReadsOnTheInputThreadOneBatchAhead) {
  // While batch k trains, the input thread reads batch k + 1: at the start of batch k (not the last of
  // its epoch) the read of k + 1 begins, without the training thread asking for it. Waits up to 10 s.
  Data d = mlp();
  Rows rows(d);
  std::vector<bool> ahead;
  auto cb = std::make_shared<callbacks::LambdaCallback>();
  cb->on_batch_begin_fn = [&](int64_t batch, Logs&) {
    if (batch + 1 == rows.num_batches()) return;
    const int64_t want = 6 * static_cast<int64_t>(rows.passes - 1) + batch + 2;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (rows.reads.load() < want && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    ahead.push_back(rows.reads.load() >= want);
  };
  FitOptions o = quiet(2);
  o.callbacks = {cb};
  d.model.fit(rows, o);
  EXPECT_EQ(ahead, std::vector<bool>(10, true));
  ASSERT_EQ(rows.readers.size(), 12u);
  for (const auto& id : rows.readers) EXPECT_NE(id, std::this_thread::get_id());
}

TEST(FitDataset, AnEmptyDatasetWarnsAndTrainsNothing) {
  struct Empty : Dataset {
    int64_t num_batches() const override { return 0; }
    void begin_pass() override {}
    std::optional<Batch> next() override { return std::nullopt; }
  } empty;
  Data d = mlp();
  const auto before = d.model.get_weights();
  std::shared_ptr<callbacks::History> h;
  const auto w = warnings_of([&] { h = d.model.fit(empty, quiet(3)); });
  EXPECT_TRUE(h->epoch.empty());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("ran out of data"), std::string::npos);
  expect_same(d.model.get_weights(), before);
}

TEST(FitDataset, StepsPerEpochGoOnWhereThePreviousEpochStopped) {
  // 6 batches a pass, 4 steps an epoch: Keras's EpochIterator reads 0 1 2 3 | 4 5, warns that the data
  // ran out before 4 steps, and starts a new pass for the third epoch.
  Data d = mlp();
  Rows rows(d);
  ASSERT_EQ(rows.num_batches(), 6);
  FitOptions o = quiet(4);
  o.steps_per_epoch = 4;
  std::shared_ptr<callbacks::History> h;
  const auto w = warnings_of([&] { h = d.model.fit(rows, o); });
  EXPECT_EQ(rows.read, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(rows.passes, 2);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("ran out of data"), std::string::npos);
  EXPECT_EQ(h->epoch, (std::vector<int>{0, 1, 2, 3}));
  // 3 steps an epoch: whole passes of two epochs each, and no warning.
  Rows again(d);
  o.steps_per_epoch = 3;
  EXPECT_TRUE(warnings_of([&] { d.model.fit(again, o); }).empty());
  EXPECT_EQ(again.read, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
}

TEST(FitDataset, AGeneratorThatRunsOutEndsTraining) {
  // 5 batches in all, 2 steps an epoch: 2 + 2 + 1, then nothing: training stops after the third epoch.
  Data d = mlp();
  Rows rows(d, 5);
  FitOptions o = quiet(10);
  o.steps_per_epoch = 2;
  std::shared_ptr<callbacks::History> h;
  const auto w = warnings_of([&] { h = d.model.fit(rows, o); });
  EXPECT_EQ(h->epoch, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(w.size(), 2u);  // the third epoch's short count, the fourth's empty pass
  // Without steps_per_epoch the first pass is the epoch; the second finds nothing and ends training.
  Data e = mlp();
  Rows once(e, 4);
  warnings_of([&] { h = e.model.fit(once, quiet(3)); });
  EXPECT_EQ(h->epoch, (std::vector<int>{0}));
  EXPECT_EQ(h->params().steps, -1);  // unknown until the pass ended
}

TEST(FitDataset, ValidationFreqAndListedEpochs) {
  Data d = mlp();
  FitOptions o = quiet(4);
  Rows val(d);
  o.validation_dataset = &val;
  o.validation_steps = 2;
  o.validation_freq = 2;
  std::vector<int> validated;
  auto cb = std::make_shared<callbacks::LambdaCallback>();
  cb->on_epoch_end_fn = [&](int epoch, Logs& logs) {
    if (logs.get("val_loss")) validated.push_back(epoch);
  };
  o.callbacks = {cb};
  d.model.fit(d.x, d.y, o);
  EXPECT_EQ(validated, (std::vector<int>{1, 3}));
  EXPECT_EQ(val.read, (std::vector<int64_t>{0, 1, 0, 1}));  // each validation is a new pass
  validated.clear();
  o.validation_freq = 0, o.validation_epochs = {1, 4};  // Keras's validation_freq=[1, 4]
  d.model.fit(d.x, d.y, o);
  EXPECT_EQ(validated, (std::vector<int>{0, 3}));
  validated.clear();
  o.validation_epochs.clear();  // validation_freq=[]: never
  d.model.fit(d.x, d.y, o);
  EXPECT_TRUE(validated.empty());
}

TEST(FitDataset, DataErrorsNameTheBatchAndKeepTheWeights) {
  Data d = mlp();
  {
    Rows rows(d);
    rows.fail_at = 3;  // the fourth read: batch 4 of the first epoch
    std::vector<Tensor> after_batch_3;
    FitOptions o = quiet(1);
    o.callbacks = {keep_weights(d.model, &after_batch_3)};
    EXPECT_THROW(d.model.fit(rows, o), std::runtime_error);  // the Dataset's own exception, unchanged
    expect_same(d.model.get_weights(), after_batch_3);
  }
  {
    Rows rows(d);
    rows.bad_at = 2;
    const auto before = d.model.get_weights();
    std::vector<Tensor> after_batch_2;
    FitOptions o = quiet(1);
    o.callbacks = {keep_weights(d.model, &after_batch_2)};
    const std::string e = testing::error_of<ValueError>([&] { d.model.fit(rows, o); });
    EXPECT_NE(e.find("fit, epoch 1, batch 2: "), std::string::npos) << e;
    EXPECT_NE(e.find("weights are as they were before this batch"), std::string::npos) << e;
    expect_same(d.model.get_weights(), after_batch_2);
  }
  {
    struct Wide : Rows {
      using Rows::Rows;
      std::optional<Batch> next() override {
        auto b = Rows::next();
        if (b) b->y.push_back(b->y[0]);  // two targets for a model of one output
        return b;
      }
    } wide(d);
    const std::string e = testing::error_of<ValueError>([&] { d.model.fit(wide, quiet()); });
    EXPECT_NE(e.find("fit, epoch 1, batch 0: "), std::string::npos) << e;
    EXPECT_NE(e.find("target arrays"), std::string::npos) << e;
  }
  FitOptions split = quiet();
  split.validation_split = 0.5;
  Rows rows(d);
  EXPECT_NE(testing::error_of<ValueError>([&] { d.model.fit(rows, split); }).find("validation_split"), std::string::npos);
}

}  // namespace
}  // namespace kerascpp
