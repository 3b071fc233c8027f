// keras.callbacks.ModelCheckpoint, as keras/src/callbacks/model_checkpoint.py (Keras 3.15): after every
// epoch (save_freq="epoch") or every save_freq batches counted across epochs. The filepath's format
// fields are filled by format_filepath (format_filepath.cpp).
#include <filesystem>
#include <ostream>

#include "kerascpp/error.h"
#include "kerascpp/model.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {
namespace {
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
std::string five(double v) { return detail::python_format(v, false, ".5f"); }
}  // namespace

ModelCheckpoint::ModelCheckpoint(std::string filepath, const Json& kwargs) : filepath_(std::move(filepath)) {
  const std::string cls = "ModelCheckpoint";
  detail::check_kwargs(cls, kwargs, {"monitor", "verbose", "save_best_only", "save_weights_only", "mode",
                                     "save_freq", "initial_value_threshold"});
  monitor_ = detail::str_arg(cls, kwargs, "monitor", "val_loss");
  verbose_ = detail::int_arg(cls, kwargs, "verbose", 0);
  save_best_only_ = detail::bool_arg(cls, kwargs, "save_best_only", false);
  save_weights_only_ = detail::bool_arg(cls, kwargs, "save_weights_only", false);
  bool mode_warned = false;
  mode_ = detail::checked_mode(cls, detail::str_arg(cls, kwargs, "mode", "auto"), mode_warned);
  best_ = detail::opt_num_arg(cls, kwargs, "initial_value_threshold");
  if (kwargs.is_object() && kwargs.contains("save_freq")) {
    const Json& f = kwargs["save_freq"];
    KCPP_CHECK(f == "epoch" || f.is_number_integer(), ValueError, "Unrecognized save_freq: ",
               f.is_string() ? f.get<std::string>() : f.dump(), ". Expected save_freq are 'epoch' or integer values");
    if (f.is_number_integer()) {
      KCPP_CHECK(f.get<int64_t>() > 0, ValueError, "ModelCheckpoint: save_freq must be 'epoch' or a positive number "
                 "of batches. Received: save_freq=", f.dump());
      save_freq_ = f.get<int64_t>();
    }
  }
  if (save_weights_only_)
    KCPP_CHECK(ends_with(filepath_, ".weights.h5"), ValueError,
               "When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided must end in "
               "`.weights.h5` (Keras weights format). Received: filepath=",
               filepath_);
  else
    KCPP_CHECK(ends_with(filepath_, ".keras") || ends_with(filepath_, ".h5"), ValueError,
               "The filepath provided must end in `.keras` (Keras model format). Received: filepath=", filepath_);
}

void ModelCheckpoint::on_epoch_begin(int epoch, Logs&) { current_epoch_ = epoch; }

// Keras's _should_save_on_batch: the batches seen since the last save, counted across epochs.
void ModelCheckpoint::on_train_batch_end(int64_t batch, Logs& logs) {
  if (save_freq_ == 0) return;
  batches_since_save_ += !last_batch_ || batch <= *last_batch_ ? batch + 1 : batch - *last_batch_;
  last_batch_ = batch;
  if (batches_since_save_ < save_freq_) return;
  batches_since_save_ = 0;
  save(current_epoch_, batch, logs);
}

void ModelCheckpoint::on_epoch_end(int epoch, Logs& logs) {
  if (save_freq_ == 0) save(epoch, std::nullopt, logs);
}

void ModelCheckpoint::save(int epoch, std::optional<int64_t> batch, const Logs& logs) {
  if (!op_set_) {
    greater_ = detail::monitor_greater("ModelCheckpoint", monitor_, mode_);
    op_set_ = true;
  }
  // Keras: self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs); a log named "epoch" would
  // clash in Python (TypeError), here the epoch wins; a log named "batch" wins over the batch, as Keras.
  std::map<std::string, double> values;
  for (const auto& kv : logs.items()) {
    if (const std::vector<double>* a = logs.array(kv.first)) {  // Keras would format the array's repr
      for (const char* end : {"}", ":", "!"})
        KCPP_CHECK(filepath_.find("{" + kv.first + end) == std::string::npos, ValueError, "ModelCheckpoint: the "
                   "filepath \"", filepath_, "\" formats the log \"", kv.first, "\", an array of ", a->size(),
                   " values (a metric with several thresholds, or one value per class): name a log that is a number.");
      continue;
    }
    values[kv.first] = kv.second;
  }
  values["epoch"] = epoch + 1;
  if (batch && !values.contains("batch")) values["batch"] = static_cast<double>(*batch + 1);
  std::string path = format_filepath(filepath_, values);

  std::ostream& out = detail::msg_out();
  if (save_best_only_) {
    std::optional<double> current = logs.get(monitor_);
    if (!current) {
      detail::warn_once(warned_, "Can save best model only with " + monitor_ + " available.");
    } else {
      std::string best_str = best_ ? five(*best_) : "None";
      if (!detail::is_improvement(*current, best_, greater_, 0)) {
        if (verbose_ > 0)
          out << "\nEpoch " << epoch + 1 << ": " << monitor_ << " did not improve from " << best_str << std::endl;
        return;
      }
      if (verbose_ > 0)
        out << "\nEpoch " << epoch + 1 << ": " << monitor_ << " improved from " << best_str << " to "
            << five(*current) << ", saving model to " << path << std::endl;
      best_ = *current;
    }
  } else if (verbose_ > 0) {
    out << "\nEpoch " << epoch + 1 << ": saving model to " << path << std::endl;
  }

  KCPP_CHECK(model() != nullptr, ValueError, "ModelCheckpoint has no model: call set_model() first.");
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::exists(dir, ec)) std::filesystem::create_directories(dir, ec);
  KCPP_CHECK(!std::filesystem::is_directory(path, ec), IOError,
             "Please specify a non-directory filepath for ModelCheckpoint. Filepath used is an existing "
             "directory: ",
             path);
  if (save_weights_only_)
    model()->save_weights(path);
  else
    model()->save(path);
  if (verbose_ > 0) out << "\nEpoch " << epoch + 1 << ": finished saving model to " << path << std::endl;
}

}  // namespace kerascpp::callbacks
