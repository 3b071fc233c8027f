// Callbacks: the keras.callbacks classes that fit() and evaluate() call at the start and end of
// training, epochs and batches. Subclass Callback (in C++, or in Python through the package) and
// override the hooks you need; set model()->stop_training to end fit after the current epoch.
//
//   auto best = std::make_shared<callbacks::ModelCheckpoint>("best.keras", Json{{"monitor", "val_loss"},
//                                                                         {"save_best_only", true}});
//   auto stop = std::make_shared<callbacks::EarlyStopping>(Json{{"patience", 3},
//                                                          {"restore_best_weights", true}});
//   model.fit({x}, {y}, {.epochs = 50, .validation_split = 0.2, .callbacks = {best, stop}});
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kerascpp/tensor.h"

namespace kerascpp {

class Model;

// Keras's logs dict: numbers by name, in insertion order ("loss", the metrics, then "val_loss"...).
// A metric whose result is an array (Precision with several thresholds, F1Score(average=None)) sets an
// array: items() shows its mean (what Keras's progress bar prints), array() its values, and get() / at()
// refuse it by name (a callback can monitor a number only; Keras fails there too).
class Logs {
 public:
  void set(const std::string& key, double value);
  void set_array(const std::string& key, std::vector<double> values);
  bool contains(const std::string& key) const;
  std::optional<double> get(const std::string& key) const;
  double at(const std::string& key) const;  // KeyError-like ValueError listing the keys
  const std::vector<double>* array(const std::string& key) const;  // nullptr: a number, or absent
  const std::vector<std::pair<std::string, double>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  // Every entry of `other`, arrays as arrays, under prefix + its key ("val_").
  void set_all(const Logs& other, const std::string& prefix = "");
  void sort_keys();  // Keras hands callbacks their logs sorted by key (callback_list.py)

 private:
  std::vector<std::pair<std::string, double>> items_;
  std::map<std::string, std::vector<double>> arrays_;
};

namespace callbacks {

using Json = nlohmann::json;

// What fit tells its callbacks (Keras's callback.params).
struct Params {
  int epochs = 1;
  int64_t steps = 0;  // batches per epoch
  int verbose = 1;
};

class Callback {
 public:
  virtual ~Callback() = default;
  void set_model(Model* model) { model_ = model; }
  Model* model() const { return model_; }
  void set_params(const Params& p) { params_ = p; }
  const Params& params() const { return params_; }

  virtual void on_train_begin(Logs& logs) {}
  virtual void on_train_end(Logs& logs) {}
  virtual void on_epoch_begin(int epoch, Logs& logs) {}
  virtual void on_epoch_end(int epoch, Logs& logs) {}
  virtual void on_train_batch_begin(int64_t batch, Logs& logs) {}
  virtual void on_train_batch_end(int64_t batch, Logs& logs) {}
  virtual void on_test_begin(Logs& logs) {}
  virtual void on_test_end(Logs& logs) {}
  virtual void on_test_batch_begin(int64_t batch, Logs& logs) {}
  virtual void on_test_batch_end(int64_t batch, Logs& logs) {}
  // True for a callback that writes files or prints (ModelCheckpoint, CSVLogger, TensorBoard,
  // BackupAndRestore, ProgbarLogger): data-parallel fit runs it on worker 0 (the chief) alone.
  virtual bool chief_only() const { return false; }

 private:
  Model* model_ = nullptr;
  Params params_;
};

using CallbackPtr = std::shared_ptr<Callback>;

// model.fit's return value: history[name] holds one number per epoch.
class History : public Callback {
 public:
  std::vector<int> epoch;
  std::map<std::string, std::vector<double>> history;
  // The logs that are arrays (see Logs), one array per epoch; their keys are not in `history`.
  std::map<std::string, std::vector<std::vector<double>>> array_history;
  void on_train_begin(Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
};

// The progress bar fit prints (verbose 1: a bar per epoch, updated per batch; 2: one line per
// epoch), in Keras 3's format: "12/12 ━━━━━━━━━━━━━━━━━━━━ 0s 2ms/step - loss: 0.1234 - val_loss: ...".
class ProgbarLogger : public Callback {
 public:
  bool chief_only() const override { return true; }
  explicit ProgbarLogger(std::ostream* out = nullptr);  // nullptr: std::cout
  void on_train_begin(Logs& logs) override;
  void on_epoch_begin(int epoch, Logs& logs) override;
  void on_train_batch_end(int64_t batch, Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_test_begin(Logs& logs) override;
  void on_test_batch_end(int64_t batch, Logs& logs) override;
  void on_test_end(Logs& logs) override;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// The callbacks below take their Keras 3 constructor arguments as a Json object of keyword
// arguments; unknown keys are a ValueError naming them.

// keras.callbacks.ModelCheckpoint(filepath, monitor="val_loss", verbose=0, save_best_only=False,
// save_weights_only=False, mode="auto", save_freq="epoch", initial_value_threshold=None).
// filepath may hold Python format fields: "ckpt-{epoch:02d}-{val_loss:.3f}.keras".
class ModelCheckpoint : public Callback {
 public:
  bool chief_only() const override { return true; }
  ModelCheckpoint(std::string filepath, const Json& kwargs = Json::object());
  void on_epoch_begin(int epoch, Logs& logs) override;
  // save_freq=<int>: counts batches across epochs and across fit() calls, as Keras (set once, in __init__).
  void on_train_batch_end(int64_t batch, Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  // The best monitored value so far (initial_value_threshold at first); NaN while there is none
  // (Keras's None).
  double best() const { return best_ ? *best_ : std::numeric_limits<double>::quiet_NaN(); }

 private:
  std::string filepath_, monitor_, mode_;
  bool save_best_only_ = false, save_weights_only_ = false, greater_ = false;
  bool op_set_ = false, warned_ = false;  // Keras sets monitor_op at the first epoch end; warns once
  int verbose_ = 0;
  std::optional<double> best_;
  int64_t save_freq_ = 0, batches_since_save_ = 0;  // save_freq 0: "epoch"
  std::optional<int64_t> last_batch_;
  int current_epoch_ = 0;
  void save(int epoch, std::optional<int64_t> batch, const Logs& logs);
};

// keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
// baseline=None, restore_best_weights=False, start_from_epoch=0).
class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(const Json& kwargs = Json::object());
  void on_train_begin(Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_end(Logs& logs) override;
  int stopped_epoch() const { return stopped_epoch_; }

 private:
  std::string monitor_, mode_;
  double min_delta_ = 0;
  std::optional<double> best_, baseline_;
  int patience_ = 0, verbose_ = 0, wait_ = 0, stopped_epoch_ = 0, start_from_epoch_ = 0, best_epoch_ = 0;
  bool restore_best_weights_ = false, greater_ = false, op_set_ = false, warned_ = false;
  std::vector<Tensor> best_weights_;
};

// keras.callbacks.TensorBoard(log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
// write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0): event files
// that TensorBoard reads, under log_dir/train and log_dir/validation, as Keras 3 writes them:
// epoch_<metric> scalars (and epoch_learning_rate) each epoch; batch_<metric> every update_freq batches
// with an integer update_freq ("batch": 1); evaluation_<metric>_vs_iterations after each evaluation;
// "<weight path>/histogram" every histogram_freq epochs; the model's config ("keras", write_graph);
// weights as keras_embedding.ckpt-<epoch>.weights.h5 every embeddings_freq epochs, with the projector's
// projector_config.pbtxt naming the Embedding layers (and embeddings_metadata). TensorFlow's op
// graph does not exist here (write_graph writes the config only); write_images and profile_batch are
// refused.
class TensorBoard : public Callback {
 public:
  bool chief_only() const override { return true; }
  explicit TensorBoard(const Json& kwargs = Json::object());
  ~TensorBoard() override;
  void on_train_begin(Logs& logs) override;
  void on_train_end(Logs& logs) override;
  void on_epoch_begin(int epoch, Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_batch_begin(int64_t batch, Logs& logs) override;
  void on_train_batch_end(int64_t batch, Logs& logs) override;
  void on_test_end(Logs& logs) override;
  const std::string& log_dir() const { return log_dir_; }

 private:
  struct Writers;
  void open_writers();
  void write_projector_config() const;
  std::string log_dir_;
  Json embeddings_metadata_;
  int histogram_freq_ = 0, update_freq_ = 0, embeddings_freq_ = 0;  // update_freq 0: "epoch"
  bool write_graph_ = true, write_steps_per_second_ = false;
  int64_t global_train_batch_ = 0, epoch_start_iterations_ = 0;
  double epoch_start_ = 0, batch_start_ = 0;
  std::unique_ptr<Writers> writers_;
};

// keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.1, patience=10, verbose=0,
// mode="auto", min_delta=1e-4, cooldown=0, min_lr=0).
class ReduceLROnPlateau : public Callback {
 public:
  explicit ReduceLROnPlateau(const Json& kwargs = Json::object());
  void on_train_begin(Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;

 private:
  std::string monitor_, mode_;
  double factor_ = 0.1, min_delta_ = 1e-4, min_lr_ = 0;
  std::optional<double> best_;
  int patience_ = 10, verbose_ = 0, cooldown_ = 0, cooldown_counter_ = 0, wait_ = 0;
  bool greater_ = false, op_set_ = false, warned_ = false;
};

// keras.callbacks.LearningRateScheduler(schedule(epoch, lr) -> lr, verbose=0); logs "learning_rate".
class LearningRateScheduler : public Callback {
 public:
  LearningRateScheduler(std::function<double(int epoch, double lr)> schedule, int verbose = 0);
  void on_epoch_begin(int epoch, Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;

 private:
  std::function<double(int, double)> schedule_;
  int verbose_;
};

// keras.callbacks.CSVLogger(filename, separator=",", append=False): one row per epoch, "epoch"
// then the log keys sorted, flushed every epoch.
class CSVLogger : public Callback {
 public:
  bool chief_only() const override { return true; }
  CSVLogger(std::string filename, std::string separator = ",", bool append = false);
  ~CSVLogger() override;
  void on_train_begin(Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_end(Logs& logs) override;

 private:
  struct File;
  std::string filename_, separator_;
  bool append_;
  std::unique_ptr<File> file_;
  std::vector<std::string> keys_;
};

// keras.callbacks.BackupAndRestore(backup_dir, save_freq="epoch", double_checkpoint=False,
// delete_checkpoint=True): after every epoch (or every save_freq batches) the weights and the
// optimizer's state go to backup_dir/latest.weights.h5 and the epoch reached to
// training_metadata.json; a fit interrupted by an exception or a killed process, started again with the
// same backup_dir, restores them and goes on from that epoch. double_checkpoint keeps the previous
// backup as *.bkp to fall back on when the latest cannot be read; a fit that ends normally deletes
// backup_dir (delete_checkpoint).
class BackupAndRestore : public Callback {
 public:
  bool chief_only() const override { return true; }
  explicit BackupAndRestore(std::string backup_dir, const Json& kwargs = Json::object());
  void on_train_begin(Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_batch_end(int64_t batch, Logs& logs) override;
  void on_train_end(Logs& logs) override;

 private:
  void restore();
  void save();
  std::string dir_, weights_, metadata_;
  int64_t save_freq_ = 0, batches_since_save_ = 0, last_batch_ = 0;  // save_freq 0: "epoch"
  int current_epoch_ = 0;
  bool double_checkpoint_ = false, delete_checkpoint_ = true;
};

// keras.callbacks.TerminateOnNaN: stops training at the first batch whose loss is NaN or infinite.
class TerminateOnNaN : public Callback {
 public:
  void on_train_batch_end(int64_t batch, Logs& logs) override;
};

// keras.callbacks.LambdaCallback: any hook given as a function.
class LambdaCallback : public Callback {
 public:
  std::function<void(int, Logs&)> on_epoch_begin_fn, on_epoch_end_fn;
  std::function<void(int64_t, Logs&)> on_batch_begin_fn, on_batch_end_fn;
  std::function<void(Logs&)> on_train_begin_fn, on_train_end_fn;
  void on_epoch_begin(int epoch, Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_batch_begin(int64_t batch, Logs& logs) override;
  void on_train_batch_end(int64_t batch, Logs& logs) override;
  void on_train_begin(Logs& logs) override;
  void on_train_end(Logs& logs) override;
};

// Appends the model's weights every `every` epochs to an HDF5 file: one dataset per weight,
// "<weight path>" of shape (snapshots, *weight shape), plus "epoch" (snapshots,), extended in
// place, so each snapshot costs the bytes of the weights, however long training has run. The
// file is flushed after each snapshot; a file of another model is an error naming it.
class WeightHistory : public Callback {
 public:
  WeightHistory(std::string filename, int every = 1);
  ~WeightHistory() override;
  void on_train_begin(Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_end(Logs& logs) override;

 private:
  struct File;
  std::string filename_;
  int every_;
  std::unique_ptr<File> file_;
};

// Keras's `{name:format}` filepath formatting with these values ("epoch" and the logs); ValueError
// for a field that is not there.
std::string format_filepath(const std::string& pattern, const std::map<std::string, double>& values);

}  // namespace callbacks
}  // namespace kerascpp
