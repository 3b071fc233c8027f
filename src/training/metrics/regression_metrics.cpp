// The metrics that average a Keras loss function per sample (keras/src/metrics/
// regression_metrics.py, probabilistic_metrics.py, hinge_metrics.py: MeanSquaredError,
// MeanAbsoluteError, ..., BinaryCrossentropy, KLDivergence, Hinge...) and RootMeanSquaredError.
// The per-sample values are the loss's call(): the same function Keras's MeanMetricWrapper calls.
#include <algorithm>
#include <cmath>

#include "kerascpp/warnings.h"

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

// CosineSimilarity: the mean of sum(normalize(y_true) * normalize(y_pred), axis), the loss's value
// with its sign turned (keras/src/metrics/regression_metrics.py cosine_similarity).
class CosineSimilarityMetric : public MeanMetricWrapper {
 public:
  explicit CosineSimilarityMetric(const Json& c) : MeanMetricWrapper(c, "CosineSimilarity", "cosine_similarity") {
    check_keys(c, "CosineSimilarity", {"axis"});
    const Json axis = c.is_object() && c.contains("axis") ? c["axis"] : Json(-1);
    loss_ = losses::get(Json{{"class_name", "CosineSimilarity"}, {"config", {{"axis", axis}}}});
    config_["axis"] = axis;
  }
  NdArray values(const Tensor& y_true, const Tensor& y_pred) const override {
    ops::NoRecord no_record;
    NdArray v = to_nd(loss_->call(y_true, y_pred), name(), "values");
    for (double& x : v.v) x = -x;
    return v;
  }

 private:
  losses::LossPtr loss_;
};

// R2Score (coefficient of determination) over (batch, outputs) values: per-output weighted sums in
// float32 accumulators, as Keras's variables, aggregated uniformly or by variance; the adjusted score
// with num_regressors.
class R2Score : public Metric {
 public:
  explicit R2Score(const Json& c) : Metric(c, "r2_score") {
    check_keys(c, "R2Score", {"class_aggregation", "num_regressors"});
    const Json agg = c.is_object() && c.contains("class_aggregation") ? c["class_aggregation"] : Json("uniform_average");
    KCPP_CHECK(agg.is_null() || agg == "uniform_average" || agg == "variance_weighted_average", ValueError,
               "Invalid value for argument `class_aggregation`. Expected one of (None, 'uniform_average', "
               "'variance_weighted_average'). Received: class_aggregation=", agg.dump());
    KCPP_CHECK(!agg.is_null(), NotImplementedError, "R2Score(class_aggregation=None) gives one score per output; "
               "kerascpp's metric results are one number. Use 'uniform_average' or 'variance_weighted_average'.");
    variance_weighted_ = agg == "variance_weighted_average";
    const Json reg = c.is_object() && c.contains("num_regressors") ? c["num_regressors"] : Json(0);
    KCPP_CHECK(reg.is_number_integer() && reg.get<int64_t>() >= 0, ValueError, "Invalid value for argument "
               "`num_regressors`. Expected a value >= 0. Received: num_regressors=", reg.dump());
    num_regressors_ = reg.get<int64_t>();
    config_["class_aggregation"] = agg;
    config_["num_regressors"] = num_regressors_;
  }
  std::string class_name() const override { return "R2Score"; }
  void update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) override {
    NdArray t = to_nd(y_true, name(), "y_true"), p = to_nd(y_pred, name(), "y_pred");
    squeeze_or_expand(t, p);
    KCPP_CHECK(t.rank() == 2 && p.rank() == 2, ValueError, "R2Score expects 2D inputs with shape (batch_size, "
               "output_dim). Received input shapes: y_pred.shape=", shape_str(p.shape), " and y_true.shape=",
               shape_str(t.shape), ".");
    const int64_t n = t.dim(0), k = t.dim(1);
    KCPP_CHECK(p.shape == t.shape, ValueError, name(), ": y_true and y_pred must have the same shape. Received: ",
               shape_str(t.shape), " and ", shape_str(p.shape));
    if (sum_.empty()) sum_ = squared_sum_ = total_mse_ = count_ = std::vector<float>(static_cast<size_t>(k), 0.f);
    KCPP_CHECK(static_cast<int64_t>(sum_.size()) == k, ValueError, name(), ": built for ", sum_.size(),
               " outputs, received ", k);
    NdArray w{{n, k}, std::vector<double>(static_cast<size_t>(n * k), 1.0)};
    if (sample_weight.defined()) {
      w = to_nd(sample_weight, name(), "sample_weight");
      if (w.rank() == 1) w.shape.push_back(1);
      w = broadcast_to(w, t.shape, name() + " (sample_weight)");
    }
    for (int64_t j = 0; j < k; ++j) {
      float s = 0.f, sq = 0.f, mse = 0.f, cnt = 0.f;
      for (int64_t i = 0; i < n; ++i) {
        const float yt = static_cast<float>(t.v[i * k + j]), yp = static_cast<float>(p.v[i * k + j]);
        const float wi = static_cast<float>(w.v[i * k + j]), d = yt - yp;
        s += yt * wi;
        sq += yt * (yt * wi);
        mse += d * d * wi;
        cnt += wi;
      }
      sum_[j] += s, squared_sum_[j] += sq, total_mse_[j] += mse, count_[j] += cnt;
    }
    num_samples_ += static_cast<float>(n * k);
  }
  double result() const override {
    const size_t k = sum_.size();
    if (k == 0) return std::nanf("");
    float agg = 0.f, weights = 0.f;
    for (size_t j = 0; j < k; ++j) {
      const float mean = sum_[j] / count_[j];
      const float total = squared_sum_[j] - sum_[j] * mean;
      float raw = 1.f - total_mse_[j] / total;
      if (std::isinf(raw)) raw = 0.f;
      agg += variance_weighted_ ? total * raw : raw;
      weights += variance_weighted_ ? total : 1.f;
    }
    float r2 = agg / weights;
    if (num_regressors_ != 0) {
      const float n = num_samples_, reg = static_cast<float>(num_regressors_);
      if (reg > n - 1) {
        warn("More independent predictors than datapoints in adjusted R2 score. Falling back to standard R2 score.");
      } else if (reg == n - 1) {
        warn("Division by zero in Adjusted R2 score. Falling back to standard R2 score.");
      } else {
        r2 = 1.f - (1.f - r2) * (n - 1.f) / (n - reg - 1.f);
      }
    }
    return r2;
  }
  void reset_state() override {
    for (auto* v : {&sum_, &squared_sum_, &total_mse_, &count_}) std::fill(v->begin(), v->end(), 0.f);
    num_samples_ = 0.f;
  }
  void visit_state(StateVisitor& v) override { v(sum_), v(squared_sum_), v(total_mse_), v(count_), v(num_samples_); }

 private:
  bool variance_weighted_ = false;
  int64_t num_regressors_ = 0;
  std::vector<float> sum_, squared_sum_, total_mse_, count_;
  float num_samples_ = 0.f;
};

}  // namespace

MetricPtr make_regression_metric(const std::string& cls, const Json& c) {
  if (cls == "RootMeanSquaredError") return std::make_shared<RootMeanSquaredError>(c);
  if (cls == "R2Score") return std::make_shared<R2Score>(c);
  if (cls == "CosineSimilarity") return std::make_shared<CosineSimilarityMetric>(c);
  for (const LossMetricSpec& s : specs())
    if (cls == s.metric_class) return std::make_shared<LossMetric>(s, c);
  return nullptr;
}

}  // namespace kerascpp::metrics::detail
