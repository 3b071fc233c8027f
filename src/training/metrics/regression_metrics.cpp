// The metrics that average a Keras loss function per sample (keras/src/metrics/
// regression_metrics.py, probabilistic_metrics.py, hinge_metrics.py: MeanSquaredError,
// MeanAbsoluteError, ..., BinaryCrossentropy, KLDivergence, Hinge...) and RootMeanSquaredError.
// The per-sample values are the loss's call(): the same function Keras's MeanMetricWrapper calls.
#include <cmath>

#include "kerascpp/losses.h"
#include "ops/tape.h"
#include "training/metrics/metric_utils.h"

namespace kerascpp::metrics::detail {
namespace {

struct LossMetricSpec {
  const char* metric_class;
  const char* default_name;
  const char* loss_class;
  std::vector<const char*> options;  // config keys passed to the loss and written by get_config
};

const std::vector<LossMetricSpec>& specs() {
  static const std::vector<LossMetricSpec> s = {
      {"MeanSquaredError", "mean_squared_error", "MeanSquaredError", {}},
      {"MeanAbsoluteError", "mean_absolute_error", "MeanAbsoluteError", {}},
      {"MeanAbsolutePercentageError", "mean_absolute_percentage_error", "MeanAbsolutePercentageError", {}},
      {"MeanSquaredLogarithmicError", "mean_squared_logarithmic_error", "MeanSquaredLogarithmicError", {}},
      {"LogCoshError", "logcosh", "LogCosh", {}},
      {"KLDivergence", "kl_divergence", "KLDivergence", {}},
      {"Poisson", "poisson", "Poisson", {}},
      {"Hinge", "hinge", "Hinge", {}},
      {"SquaredHinge", "squared_hinge", "SquaredHinge", {}},
      {"CategoricalHinge", "categorical_hinge", "CategoricalHinge", {}},
      {"BinaryCrossentropy", "binary_crossentropy", "BinaryCrossentropy", {"from_logits", "label_smoothing"}},
      {"CategoricalCrossentropy", "categorical_crossentropy", "CategoricalCrossentropy",
       {"from_logits", "label_smoothing", "axis"}},
      {"SparseCategoricalCrossentropy", "sparse_categorical_crossentropy", "SparseCategoricalCrossentropy",
       {"from_logits", "ignore_class", "axis"}},
  };
  return s;
}

class LossMetric : public MeanMetricWrapper {
 public:
  LossMetric(const LossMetricSpec& spec, const Json& c) : MeanMetricWrapper(c, spec.metric_class, spec.default_name) {
    check_keys(c, spec.metric_class, spec.options);
    Json loss_config = Json::object();
    for (const char* o : spec.options)
      if (c.is_object() && c.contains(o)) loss_config[o] = c[o];
    loss_ = losses::get(Json{{"class_name", spec.loss_class}, {"config", loss_config}});
    const Json lc = loss_->get_config();
    for (const char* o : spec.options) config_[o] = lc.contains(o) ? lc[o] : (std::string(o) == "axis" ? Json(-1) : Json());
  }
  NdArray values(const Tensor& y_true, const Tensor& y_pred) const override {
    ops::NoRecord no_record;  // metrics are never differentiated
    return to_nd(loss_->call(y_true, y_pred), name(), "values");
  }

 private:
  losses::LossPtr loss_;
};

// Mean of (y_pred - y_true)^2 over every element, then the square root.
class RootMeanSquaredError : public MeanMetricWrapper {
 public:
  explicit RootMeanSquaredError(const Json& c)
      : MeanMetricWrapper(c, "RootMeanSquaredError", "root_mean_squared_error") {
    check_keys(c, "RootMeanSquaredError", {});
  }
  NdArray values(const Tensor& y_true, const Tensor& y_pred) const override {
    NdArray t = to_nd(y_true, name(), "y_true"), p = to_nd(y_pred, name(), "y_pred");
    squeeze_or_expand(t, p);
    const Shape s = broadcast_shapes(t.shape, p.shape, name());
    t = broadcast_to(t, s, name());
    p = broadcast_to(p, s, name());
    for (size_t i = 0; i < p.v.size(); ++i) {
      const float d = static_cast<float>(p.v[i]) - static_cast<float>(t.v[i]);  // float32, as Keras
      p.v[i] = static_cast<double>(d) * d;
    }
    return p;
  }
  double result() const override { return std::sqrt(Mean::result()); }
};

}  // namespace

MetricPtr make_regression_metric(const std::string& cls, const Json& c) {
  if (cls == "RootMeanSquaredError") return std::make_shared<RootMeanSquaredError>(c);
  for (const LossMetricSpec& s : specs())
    if (cls == s.metric_class) return std::make_shared<LossMetric>(s, c);
  return nullptr;
}

}  // namespace kerascpp::metrics::detail
