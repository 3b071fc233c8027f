// keras.callbacks.ModelCheckpoint, as keras/src/callbacks/model_checkpoint.py (Keras 3.15), for
// save_freq="epoch". The filepath's format fields are filled by format_filepath (format_filepath.cpp).
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
    KCPP_CHECK(f == "epoch", NotImplementedError, "ModelCheckpoint: save_freq=", f.dump(),
               " (saving every N batches) is not supported yet; use save_freq='epoch'.");
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

void ModelCheckpoint::on_epoch_end(int epoch, Logs& logs) {
  if (!op_set_) {
    greater_ = detail::monitor_greater("ModelCheckpoint", monitor_, mode_);
    op_set_ = true;
  }
  // Keras: self.filepath.format(epoch=epoch + 1, **logs); a log named "epoch" would clash in
  // Python (TypeError), here the epoch wins.
  std::map<std::string, double> values;
  for (const auto& kv : logs.items()) values[kv.first] = kv.second;
  values["epoch"] = epoch + 1;
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
