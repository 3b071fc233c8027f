// MonitorCallback's logic (keras/src/callbacks/monitor_callback.py), shared by EarlyStopping,
// ModelCheckpoint and ReduceLROnPlateau, and ReduceLROnPlateau's decision
// (keras/src/callbacks/reduce_lr_on_plateau.py), kept apart from the Model so tests reach it alone.
#include <algorithm>
#include <cmath>

#include "kerascpp/error.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks::detail {
namespace {

// Keras 3 reads the direction from the compiled metric objects (their `_direction`, "up" or
// "down") whose name equals the monitor without "val_". These are the names the built-in metrics
// log, by class default and by compile() string identifier, with the direction Keras 3.15 gives
// them (checked by scripts/fixtures/callbacks_reference.py, "monitor_direction").
// A metric Keras gives no direction (Mean, Sum, custom functions) is not here: ValueError, as Keras.
struct Direction {
  const char* name;
  bool up;
};
constexpr Direction kDirections[] = {
    // accuracy_metrics.py, confusion_metrics.py, f_score_metrics.py, iou_metrics.py, correlation.
    {"accuracy", true}, {"acc", true}, {"binary_accuracy", true}, {"categorical_accuracy", true},
    {"sparse_categorical_accuracy", true}, {"top_k_categorical_accuracy", true},
    {"sparse_top_k_categorical_accuracy", true}, {"auc", true}, {"precision", true}, {"recall", true},
    {"f1_score", true}, {"fbeta_score", true}, {"iou", true}, {"mean_iou", true}, {"binary_iou", true},
    {"one_hot_iou", true}, {"one_hot_mean_iou", true}, {"pearson_correlation", true},
    {"concordance_correlation", true}, {"precision_at_recall", true}, {"recall_at_precision", true},
    {"sensitivity_at_specificity", true}, {"specificity_at_sensitivity", true},
    // regression_metrics.py: R2Score and CosineSimilarity go up, the errors down.
    {"r2_score", true}, {"cosine_similarity", true},
    {"mae", false}, {"mse", false}, {"mape", false}, {"msle", false}, {"mean_absolute_error", false},
    {"mean_squared_error", false}, {"mean_absolute_percentage_error", false},
    {"mean_squared_logarithmic_error", false}, {"root_mean_squared_error", false}, {"log_cosh_error", false},
    {"logcosh", false},
    // hinge_metrics.py, probabilistic_metrics.py, and loss functions wrapped by compile().
    {"hinge", false}, {"squared_hinge", false}, {"categorical_hinge", false}, {"kl_divergence", false},
    {"poisson", false}, {"binary_crossentropy", false}, {"categorical_crossentropy", false},
    {"sparse_categorical_crossentropy", false}, {"binary_focal_crossentropy", false},
    {"categorical_focal_crossentropy", false}, {"huber", false}, {"log_cosh", false},
};

}  // namespace

std::string checked_mode(const std::string& callback, const std::string& mode, bool& warned) {
  if (mode == "auto" || mode == "min" || mode == "max") return mode;
  warn_once(warned, callback + " mode '" + mode + "' is unknown, fallback to auto mode.");
  return "auto";
}

bool monitor_greater(const std::string& callback, const std::string& monitor, const std::string& mode) {
  if (mode == "min") return false;
  if (mode == "max") return true;
  // str.removeprefix("val_"): one prefix only.
  std::string name = monitor.rfind("val_", 0) == 0 ? monitor.substr(4) : monitor;
  if (name == "loss") return false;
  for (const auto& d : kDirections)
    if (name == d.name) return d.up;
  KCPP_THROW(ValueError, callback, " callback received monitor=", monitor,
             ", but Keras isn't able to automatically determine whether that metric should be maximized or "
             "minimized. Pass `mode='max'` in order to monitor based on the highest metric value, or pass "
             "`mode='min'` in order to use the lowest value.");
}

bool is_improvement(double current, const std::optional<double>& reference, bool greater, double min_delta) {
  if (!reference) return true;
  double d = std::fabs(min_delta);
  // Keras: monitor_op(current - min_delta, reference) with min_delta negated for "less".
  return greater ? current - d > *reference : current + d < *reference;
}

std::optional<double> plateau_step(const PlateauSettings& s, PlateauState& st, double current, double lr) {
  if (st.cooldown_counter > 0) {
    st.cooldown_counter -= 1;
    st.wait = 0;
  }
  if (is_improvement(current, st.best, s.greater, s.min_delta)) {
    st.best = current;
    st.wait = 0;
    return std::nullopt;
  }
  if (st.cooldown_counter > 0) return std::nullopt;
  st.wait += 1;
  if (st.wait < s.patience) return std::nullopt;
  // Keras compares with np.float32(min_lr): the float32 nearest min_lr, seen as a double.
  if (!(lr > static_cast<double>(static_cast<float>(s.min_lr)))) return std::nullopt;
  double new_lr = std::max(lr * s.factor, s.min_lr);
  st.cooldown_counter = s.cooldown;
  st.wait = 0;
  return new_lr;
}

}  // namespace kerascpp::callbacks::detail
