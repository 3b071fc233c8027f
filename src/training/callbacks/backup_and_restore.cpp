// keras.callbacks.BackupAndRestore, as keras/src/callbacks/backup_and_restore.py (Keras 3.15).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/atomic_file.h"
#include "kerascpp/error.h"
#include "kerascpp/model.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {
namespace fs = std::filesystem;

BackupAndRestore::BackupAndRestore(std::string backup_dir, const Json& kwargs) : dir_(std::move(backup_dir)) {
  const std::string cls = "BackupAndRestore";
  detail::check_kwargs(cls, kwargs, {"save_freq", "double_checkpoint", "delete_checkpoint"});
  KCPP_CHECK(!dir_.empty(), ValueError, "Empty `backup_dir` argument passed");
  weights_ = (fs::path(dir_) / "latest.weights.h5").string();
  metadata_ = (fs::path(dir_) / "training_metadata.json").string();
  double_checkpoint_ = detail::bool_arg(cls, kwargs, "double_checkpoint", false);
  delete_checkpoint_ = detail::bool_arg(cls, kwargs, "delete_checkpoint", true);
  const Json freq = kwargs.value("save_freq", Json("epoch"));
  KCPP_CHECK(freq == "epoch" || (freq.is_number_integer() && freq.get<int64_t>() > 0), ValueError,
             "Invalid value for argument `save_freq`. Received: save_freq=", freq.dump(),
             ". Expected either 'epoch' or an integer value.");
  if (freq.is_number_integer()) save_freq_ = freq.get<int64_t>();
}

// The weights (with the optimizer's state) and the epoch to go on from, when a backup exists.
void BackupAndRestore::restore() {
  KCPP_CHECK(model() != nullptr, ValueError, "BackupAndRestore has no model: call set_model() first.");
  if (fs::exists(weights_)) {
    if (model()->optimizer() && !model()->optimizer()->built())
      model()->optimizer()->build(model()->trainable_weights());
    model()->load_weights(weights_);
  }
  if (!fs::exists(metadata_)) return;
  std::ifstream in(metadata_);
  std::stringstream text;
  text << in.rdbuf();
  Json meta;
  try {
    meta = Json::parse(text.str());
  } catch (const Json::exception& e) {
    KCPP_THROW(IOError, "BackupAndRestore: \"", metadata_, "\" is not the JSON it writes: ", e.what());
  }
  KCPP_CHECK(meta.is_object() && meta.contains("epoch") && meta["epoch"].is_number_integer(), IOError,
             "BackupAndRestore: \"", metadata_, "\" holds no epoch. Received: ", meta.dump());
  model()->resume_at_epoch = meta["epoch"].get<int>();
}

// Keras falls back on the previous backup (double_checkpoint) when the latest cannot be read.
void BackupAndRestore::on_train_begin(Logs&) {
  try {
    restore();
  } catch (const IOError&) {
    const std::string prev_weights = weights_ + ".bkp", prev_meta = metadata_ + ".bkp";
    if (!fs::exists(prev_weights)) throw;
    fs::copy_file(prev_weights, weights_, fs::copy_options::overwrite_existing);
    if (fs::exists(prev_meta)) {
      fs::copy_file(prev_meta, metadata_, fs::copy_options::overwrite_existing);
    } else {
      fs::remove(metadata_);
    }
    restore();
  }
}

void BackupAndRestore::on_epoch_end(int epoch, Logs&) {
  current_epoch_ = epoch + 1;
  last_batch_ = 0;
  if (save_freq_ == 0) save();
}

void BackupAndRestore::on_train_batch_end(int64_t batch, Logs&) {
  if (save_freq_ == 0) return;
  batches_since_save_ += batch <= last_batch_ ? batch + 1 : batch - last_batch_;  // a new epoch starts at 0
  last_batch_ = batch;
  if (batches_since_save_ < save_freq_) return;
  batches_since_save_ = 0;
  save();
}

void BackupAndRestore::save() {
  KCPP_CHECK(model() != nullptr, ValueError, "BackupAndRestore has no model: call set_model() first.");
  fs::create_directories(dir_);
  if (double_checkpoint_ && fs::exists(weights_))
    fs::copy_file(weights_, weights_ + ".bkp", fs::copy_options::overwrite_existing);
  if (double_checkpoint_ && fs::exists(metadata_))
    fs::copy_file(metadata_, metadata_ + ".bkp", fs::copy_options::overwrite_existing);
  model()->save_weights(weights_);  // atomically, with the optimizer's state
  const std::string meta = Json{{"epoch", current_epoch_}, {"batch", last_batch_}}.dump();
  io::write_file_atomically(metadata_, meta.data(), meta.size());
}

void BackupAndRestore::on_train_end(Logs&) {
  if (delete_checkpoint_ && fs::exists(dir_)) fs::remove_all(dir_);
}

}  // namespace kerascpp::callbacks
