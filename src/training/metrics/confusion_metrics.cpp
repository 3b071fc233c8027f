// Precision, Recall, AUC, the four confusion counts and the rate-at-rate metrics (PrecisionAtRecall...)
// (keras/src/metrics/confusion_metrics.py), with the confusion-matrix
// update of keras/src/metrics/metrics_utils.py: the general path (one comparison per threshold)
// and the bucketed path Keras takes for evenly spaced thresholds (AUC's default).
#include <algorithm>
#include <cmath>

#include "training/metrics/metric_utils.h"

namespace kerascpp::metrics::detail {
namespace {

constexpr double kEpsilon = 1e-7;     // backend.epsilon()
constexpr float kNegInf = -1e10f;     // metrics_utils.NEG_INF

double no_nan(double a, double b) { return b == 0 ? 0.0 : a / b; }

// The counts at each threshold: [threshold * labels + label], one label unless multi_label (AUC).
struct Confusion {
  std::vector<float> thresholds;  // float32, as Keras's threshold tensor
  bool evenly = false;
  int64_t labels = 1;
  std::vector<double> tp, fp, tn, fn;
  void reset() { tp = fp = tn = fn = std::vector<double>(thresholds.size() * static_cast<size_t>(labels), 0.0); }
  void visit(Metric::StateVisitor& v) { v(tp), v(fp), v(tn), v(fn); }
};

// tf.math.top_k keeps the k largest along the last axis (the lower index first on ties); the rest
// become NEG_INF (metrics_utils._filter_top_k).
void filter_top_k(NdArray& p, int64_t k) {
  const int64_t c = p.dim(-1);
  std::vector<int64_t> idx(static_cast<size_t>(c));
  for (int64_t r = 0; r < shape_size(p.shape) / std::max<int64_t>(c, 1); ++r) {
    double* row = p.v.data() + r * c;
    for (int64_t j = 0; j < c; ++j) idx[j] = j;
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return row[a] > row[b]; });
    for (int64_t j = std::min(k, c); j < c; ++j) row[idx[j]] = kNegInf;
  }
}

NdArray take_class(const NdArray& a, int64_t class_id, const std::string& who) {
  KCPP_CHECK(a.rank() >= 2, ValueError, who, ": When class_id is provided, y_pred must be a 2D array with shape "
             "(num_samples, num_classes), found shape: ", shape_str(a.shape));
  const int64_t c = a.dim(-1);
  KCPP_CHECK(class_id >= 0 && class_id < c, ValueError, who, ": class_id=", class_id, " is out of range for ", c,
             " classes.");
  NdArray out{a.shape, {}};
  out.shape.back() = 1;
  for (int64_t r = 0; r < shape_size(a.shape) / c; ++r) out.v.push_back(a.v[r * c + class_id]);
  return out;
}

// metrics_utils.update_confusion_matrix_variables. multi_label: each column of a 2D y_pred counted on
// its own (m.labels of them); label_weights (not with multi_label): a weight per column of y_pred.
void update_confusion(Confusion& m, const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight,
                      int64_t top_k, int64_t class_id, bool from_logits, const std::string& who,
                      bool multi_label = false, const std::vector<double>& label_weights = {}) {
  NdArray t = to_nd(y_true, who, "y_true"), p = to_nd(y_pred, who, "y_pred");
  if (from_logits)
    for (double& v : p.v) v = 1.f / (1.f + std::exp(-static_cast<float>(v)));
  squeeze_or_expand(p, t);
  NdArray w;
  const bool weighted = sample_weight.defined();
  if (weighted) {
    w = to_nd(sample_weight, who, "sample_weight");
    w.shape.push_back(1);
    NdArray t_copy = t;
    squeeze_or_expand(t_copy, w, false);
  }
  if (top_k > 0) filter_top_k(p, top_k);
  if (class_id >= 0) {
    t = take_class(t, class_id, who);
    p = take_class(p, class_id, who);
  }
  KCPP_CHECK(t.v.size() == p.v.size(), ValueError, who, ": y_true and y_pred must have the same number of values. "
             "Received: y_true.shape=", shape_str(y_true.shape()), ", y_pred.shape=", shape_str(y_pred.shape()));
  if (weighted) w = broadcast_to(w, p.shape, who + " (sample_weight)");
  const int64_t columns = p.rank() == 0 ? 1 : p.dim(-1);
  if (multi_label) {
    KCPP_CHECK(p.rank() == 2, ValueError, who, ": `y_pred` must have rank 2 when `multi_label=True`. Found rank ",
               p.rank(), ". Full shape received for `y_pred`: ", shape_str(p.shape));
    KCPP_CHECK(columns == m.labels, ValueError, who, ": built for ", m.labels, " labels; y_pred has ", columns,
               " (shape ", shape_str(p.shape), ").");
  }
  KCPP_CHECK(label_weights.empty() || static_cast<int64_t>(label_weights.size()) == columns ||
             label_weights.size() == 1, ValueError, who, ": ", label_weights.size(), " label_weights do not fit y_pred "
             "of shape ", shape_str(p.shape), " (one weight per column).");
  const size_t n = p.v.size(), nt = m.thresholds.size(), L = static_cast<size_t>(m.labels);
  auto label_of = [&](size_t j) { return multi_label ? j % L : 0; };
  auto weight = [&](size_t j) {
    double wj = weighted ? w.v[j] : 1.0;
    if (!label_weights.empty()) wj *= label_weights[label_weights.size() == 1 ? 0 : j % static_cast<size_t>(columns)];
    return wj;
  };
  if (m.evenly) {
    // _update_confusion_matrix_variables_optimized: bucket = ceil(p * (N - 1)) - 1 in float32.
    const bool with_epsilon = m.thresholds.front() < 0.f || m.thresholds.back() > 1.f;
    std::vector<double> tp_b(nt * L, 0.0), fp_b(nt * L, 0.0), total_true(L, 0.0), total_false(L, 0.0);
    for (size_t j = 0; j < n; ++j) {
      const float pj = std::min(std::max(static_cast<float>(p.v[j]), 0.f), 1.f);
      float b = std::ceil(pj * (static_cast<float>(nt) - 1.f)) - 1.f;
      if (with_epsilon) b = std::max(b, 0.f);
      const bool label = t.v[j] != 0;
      const double wj = weight(j);
      const size_t l = label_of(j);
      (label ? total_true : total_false)[l] += wj;
      if (b < 0) continue;  // segment_sum drops negative ids
      (label ? tp_b : fp_b)[static_cast<size_t>(b) * L + l] += wj;
    }
    for (size_t l = 0; l < L; ++l) {
      double tp = 0, fp = 0;
      for (size_t i = nt; i-- > 0;) {
        tp += tp_b[i * L + l];
        fp += fp_b[i * L + l];
        m.tp[i * L + l] += tp;
        m.fp[i * L + l] += fp;
        m.tn[i * L + l] += total_false[l] - fp;
        m.fn[i * L + l] += total_true[l] - tp;
      }
    }
    return;
  }
  for (size_t i = 0; i < nt; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const bool pos = static_cast<float>(p.v[j]) > m.thresholds[i];
      const bool label = t.v[j] != 0;
      const double wj = weight(j);
      (label ? (pos ? m.tp : m.fn) : (pos ? m.fp : m.tn))[i * L + label_of(j)] += wj;
    }
  }
}

// metrics_utils.is_evenly_distributed_thresholds (np.allclose with atol = epsilon).
bool evenly(const std::vector<double>& t) {
  const size_t n = t.size();
  if (n < 3) return false;
  for (size_t i = 0; i < n; ++i) {
    const double e = static_cast<float>(static_cast<double>(i)) / static_cast<float>(n - 1);
    if (std::fabs(t[i] - e) > kEpsilon + 1e-5 * std::fabs(e)) return false;
  }
  return true;
}

int64_t int_or(const Json& c, const char* key, int64_t fallback, const std::string& who) {
  if (!c.is_object() || !c.contains(key) || c[key].is_null()) return fallback;
  KCPP_CHECK(c[key].is_number_integer(), ValueError, who, ": `", key, "` must be an integer. Received: ", key, "=",
             c[key].dump());
  return c[key].get<int64_t>();
}

// metrics_utils.parse_init_thresholds: null (the default), a number or a list of numbers, each in [0, 1].
std::vector<float> thresholds_of(const Json& given, float fallback, const std::string& cls) {
  if (given.is_null()) return {fallback};
  const Json list = given.is_array() ? given : Json::array({given});
  std::vector<float> out;
  for (const Json& t : list) {
    KCPP_CHECK(t.is_number(), ValueError, cls, ": `thresholds` must be a number or a list of numbers. Received: "
               "thresholds=", given.dump());
    KCPP_CHECK(t.get<double>() >= 0 && t.get<double>() <= 1, ValueError,
               "Threshold values must be in [0, 1]. Received: thresholds=", given.dump());
    out.push_back(static_cast<float>(t.get<double>()));
  }
  KCPP_CHECK(!out.empty(), ValueError, cls, ": `thresholds` is an empty list.");
  return out;
}

// The thresholds of Precision, Recall and the four counts; evenly spaced ones take Keras's bucketed path.
void set_thresholds(Confusion& m, const Json& given, float fallback, const std::string& cls) {
  m.thresholds = thresholds_of(given, fallback, cls);
  m.evenly = evenly(std::vector<double>(m.thresholds.begin(), m.thresholds.end()));
  m.reset();
}

// Precision and Recall: thresholds (one result per threshold, an array when there are several), top_k,
// class_id.
class PrecisionRecall : public Metric {
 public:
  PrecisionRecall(const Json& c, bool recall)
      : Metric(c, recall ? "recall" : "precision"), recall_(recall) {
    const std::string cls = class_name();
    check_keys(c, cls, {"thresholds", "top_k", "class_id"});
    top_k_ = int_or(c, "top_k", -1, cls);
    class_id_ = int_or(c, "class_id", -1, cls);
    Json thr = c.is_object() && c.contains("thresholds") ? c["thresholds"] : Json();
    config_["thresholds"] = thr;
    config_["top_k"] = top_k_ < 0 ? Json() : Json(top_k_);
    config_["class_id"] = class_id_ < 0 ? Json() : Json(class_id_);
    set_thresholds(m_, thr, top_k_ > 0 ? kNegInf : 0.5f, cls);
  }
  std::string class_name() const override { return recall_ ? "Recall" : "Precision"; }
  void update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) override {
    update_confusion(m_, y_true, y_pred, sample_weight, top_k_, class_id_, false, name());
  }
  bool array_result() const override { return m_.thresholds.size() > 1; }
  std::vector<double> result_array() const override {
    std::vector<double> out;
    for (size_t i = 0; i < m_.tp.size(); ++i) out.push_back(no_nan(m_.tp[i], m_.tp[i] + (recall_ ? m_.fn[i] : m_.fp[i])));
    return out;
  }
  double result() const override { return scalar_result(*this); }
  void reset_state() override { m_.reset(); }
  void visit_state(StateVisitor& v) override { m_.visit(v); }

 private:
  bool recall_;
  int64_t top_k_ = -1, class_id_ = -1;
  Confusion m_;
};

// TruePositives, FalsePositives, TrueNegatives, FalseNegatives (_ConfusionMatrixConditionCount): the
// weighted count of one cell of the confusion matrix at each threshold (0.5 by default).
class ConditionCount : public Metric {
 public:
  enum Cell { kTP, kFP, kTN, kFN };
  ConditionCount(const Json& c, Cell cell, const char* cls, const char* default_name)
      : Metric(c, default_name), cell_(cell), cls_(cls) {
    check_keys(c, cls_, {"thresholds"});
    const Json given = c.is_object() && c.contains("thresholds") ? c["thresholds"] : Json();
    set_thresholds(m_, given, 0.5f, cls_);
    config_["thresholds"] = given;  // as given (None: 0.5)
  }
  std::string class_name() const override { return cls_; }
  void update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) override {
    update_confusion(m_, y_true, y_pred, sample_weight, -1, -1, false, name());
  }
  bool array_result() const override { return m_.thresholds.size() > 1; }
  std::vector<double> result_array() const override {
    const std::vector<double>& v = cell_ == kTP ? m_.tp : cell_ == kFP ? m_.fp : cell_ == kTN ? m_.tn : m_.fn;
    std::vector<double> out;
    for (double x : v) out.push_back(static_cast<float>(x));  // a float32 accumulator, as Keras's
    return out;
  }
  double result() const override { return scalar_result(*this); }
  void reset_state() override { m_.reset(); }
  void visit_state(StateVisitor& v) override { m_.visit(v); }

 private:
  Cell cell_;
  std::string cls_;
  Confusion m_;
};

// label_weights as a config holds them: a list, or the {"class_name": "__tensor__"} a Keras file writes.
std::vector<double> label_weights_of(const Json& given) {
  if (given.is_null()) return {};
  const Json list = given.is_object() && given.contains("config") && given["config"].contains("value")
                        ? given["config"]["value"] : given;
  KCPP_CHECK(list.is_array() && !list.empty(), ValueError, "AUC: `label_weights` must be a list of numbers. "
             "Received: label_weights=", given.dump());
  std::vector<double> out;
  for (const Json& v : list) {
    KCPP_CHECK(v.is_number() && v.get<double>() >= 0, ValueError, "All values of `label_weights` must be "
               "non-negative. Received: label_weights=", given.dump());
    out.push_back(static_cast<float>(v.get<double>()));
  }
  return out;
}

// AUC: the ROC, PR or PR-gain curve's area by a Riemann sum over the thresholds; with multi_label, one
// area per label (column of y_pred), averaged (weighted by label_weights when given).
class AUC : public Metric {
 public:
  explicit AUC(const Json& c) : Metric(c, "auc") {
    check_keys(c, "AUC", {"num_thresholds", "curve", "summation_method", "thresholds", "multi_label", "num_labels",
                          "label_weights", "from_logits"});
    auto get = [&](const char* k) { return c.is_object() && c.contains(k) ? c[k] : Json(); };
    std::string curve = get("curve").is_string() ? get("curve").get<std::string>() : "ROC";
    std::transform(curve.begin(), curve.end(), curve.begin(), ::toupper);
    KCPP_CHECK(curve == "ROC" || curve == "PR" || curve == "PRGAIN", ValueError, "AUC: Invalid AUCCurve value: ",
               get("curve").dump(), ". Expected values are [\"PR\", \"ROC\", \"PRGAIN\"]");
    curve_ = curve;
    summation_ = get("summation_method").is_string() ? get("summation_method").get<std::string>() : "interpolation";
    std::transform(summation_.begin(), summation_.end(), summation_.begin(), ::tolower);
    KCPP_CHECK(summation_ == "interpolation" || summation_ == "majoring" || summation_ == "minoring", ValueError,
               "AUC: Invalid AUC summation method value: ", summation_);
    from_logits_ = get("from_logits").is_boolean() && get("from_logits").get<bool>();
    KCPP_CHECK(get("multi_label").is_null() || get("multi_label").is_boolean(), ValueError,
               "AUC: `multi_label` must be a boolean. Received: multi_label=", get("multi_label").dump());
    multi_label_ = get("multi_label").is_boolean() && get("multi_label").get<bool>();
    const int64_t num_labels = int_or(c, "num_labels", 0, "AUC");
    KCPP_CHECK(num_labels == 0 || multi_label_, ValueError, "`num_labels` is needed only when `multi_label` is True.");
    KCPP_CHECK(num_labels >= 0, ValueError, "AUC: `num_labels` must be positive. Received: num_labels=", num_labels);
    label_weights_ = label_weights_of(get("label_weights"));
    std::vector<double> thr;
    const Json given = get("thresholds");
    if (!given.is_null()) {
      KCPP_CHECK(given.is_array(), ValueError, "AUC: `thresholds` must be a list. Received: ", given.dump());
      for (const Json& v : given) thr.push_back(v.get<double>());
      std::sort(thr.begin(), thr.end());
      std::vector<double> with_ends = {0.0};
      with_ends.insert(with_ends.end(), thr.begin(), thr.end());
      with_ends.push_back(1.0);
      m_.evenly = evenly(with_ends);
      num_thresholds_ = static_cast<int64_t>(thr.size()) + 2;
    } else {
      num_thresholds_ = int_or(c, "num_thresholds", 200, "AUC");
      KCPP_CHECK(num_thresholds_ > 1, ValueError, "Argument `num_thresholds` must be an integer > 1. Received: "
                 "num_thresholds=", num_thresholds_);
      for (int64_t i = 0; i < num_thresholds_ - 2; ++i)
        thr.push_back((static_cast<double>(i) + 1) * 1.0 / static_cast<double>(num_thresholds_ - 1));
      m_.evenly = true;
    }
    m_.thresholds.push_back(static_cast<float>(0.0 - kEpsilon));
    for (double t : thr) m_.thresholds.push_back(static_cast<float>(t));
    m_.thresholds.push_back(static_cast<float>(1.0 + kEpsilon));
    if (!multi_label_ || num_labels > 0) build(multi_label_ ? num_labels : 1);  // else at the first update
    config_ = {{"num_thresholds", num_thresholds_}, {"curve", curve_}, {"summation_method", summation_},
               {"multi_label", multi_label_}, {"num_labels", num_labels > 0 ? Json(num_labels) : Json()},
               {"label_weights", label_weights_.empty() ? Json() : Json(label_weights_)}, {"from_logits", from_logits_}};
    if (!given.is_null()) config_["thresholds"] = thr;
  }
  std::string class_name() const override { return "AUC"; }
  void update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) override {
    if (!built_) {
      KCPP_CHECK(y_pred.rank() == 2, ValueError, name(), ": `y_pred` must have rank 2 when `multi_label=True`. "
                 "Found rank ", y_pred.rank(), ". Full shape received for `y_pred`: ", shape_str(y_pred.shape()));
      build(y_pred.dim(1));
    }
    KCPP_CHECK(!multi_label_ || label_weights_.empty() || static_cast<int64_t>(label_weights_.size()) == m_.labels,
               ValueError, name(), ": ", label_weights_.size(), " label_weights for ", m_.labels, " labels.");
    update_confusion(m_, y_true, y_pred, sample_weight, -1, -1, from_logits_, name(), multi_label_,
                     multi_label_ ? std::vector<double>() : label_weights_);
  }
  void reset_state() override {
    if (built_) m_.reset();
  }
  void visit_state(StateVisitor& v) override { m_.visit(v); }

  double result() const override {
    if (!built_) return 0.0;
    const size_t L = static_cast<size_t>(m_.labels);
    std::vector<double> by_label(L, 0.0);
    for (size_t l = 0; l < L; ++l) by_label[l] = area(l);
    if (!multi_label_) return by_label[0];
    double sum = 0, weights = 0;
    for (size_t l = 0; l < L; ++l) {
      const double w = label_weights_.empty() ? 1.0 : label_weights_[l];
      sum += by_label[l] * w;
      weights += w;
    }
    return label_weights_.empty() ? sum / static_cast<double>(L) : no_nan(sum, weights);
  }

 private:
  void build(int64_t labels) {
    m_.labels = labels;
    m_.reset();
    built_ = true;
  }

  // The area under one label's curve (every label pooled unless multi_label).
  double area(size_t l) const {
    const size_t n = m_.thresholds.size(), L = static_cast<size_t>(m_.labels);
    auto at = [&](const std::vector<double>& v, size_t i) { return v[i * L + l]; };
    double sum = 0;
    if (curve_ == "PR" && summation_ == "interpolation") {  // AUC.interpolate_pr_auc (Davis & Goadrich 2006)
      for (size_t i = 0; i + 1 < n; ++i) {
        const double tp0 = at(m_.tp, i), tp1 = at(m_.tp, i + 1);
        const double dtp = tp0 - tp1;
        const double p0 = tp0 + at(m_.fp, i), p1 = tp1 + at(m_.fp, i + 1);
        const double slope = no_nan(dtp, std::max(p0 - p1, 0.0));
        const double intercept = tp1 - slope * p1;
        const double ratio = p0 > 0 && p1 > 0 ? no_nan(p0, std::max(p1, 0.0)) : 1.0;
        sum += no_nan(slope * (dtp + intercept * std::log(ratio)), std::max(tp1 + at(m_.fn, i + 1), 0.0));
      }
      return sum;
    }
    std::vector<double> x(n), y(n);
    for (size_t i = 0; i < n; ++i) {
      const double tp = at(m_.tp, i), fp = at(m_.fp, i), tn = at(m_.tn, i), fn = at(m_.fn, i);
      const double recall = no_nan(tp, tp + fn);
      if (curve_ == "ROC") {
        x[i] = no_nan(fp, fp + tn), y[i] = recall;
      } else if (curve_ == "PR") {
        x[i] = recall, y[i] = no_nan(tp, tp + fp);
      } else {  // PRGAIN
        const double scaling = no_nan(tp + fn, tn + fp);
        x[i] = tp == 0 ? 0.0 : std::max(1.0 - scaling * no_nan(fn, tp), 0.0);
        y[i] = tp == 0 ? 1.0 : 1.0 - scaling * no_nan(fp, tp);
      }
    }
    for (size_t i = 0; i + 1 < n; ++i) {
      const double h = summation_ == "interpolation" ? (y[i] + y[i + 1]) / 2.0
                       : summation_ == "minoring"    ? std::min(y[i], y[i + 1])
                                                     : std::max(y[i], y[i + 1]);
      sum += (x[i] - x[i + 1]) * h;
    }
    return sum;
  }

  std::string curve_, summation_;
  bool from_logits_ = false, multi_label_ = false, built_ = false;
  int64_t num_thresholds_ = 200;
  std::vector<double> label_weights_;
  Confusion m_;
};

// SensitivityAtSpecificity, SpecificityAtSensitivity, PrecisionAtRecall, RecallAtPrecision
// (SensitivitySpecificityBase): the confusion counts at num_thresholds evenly spaced thresholds in [0, 1],
// and the best `dependent` rate over the thresholds whose `constrained` rate reaches the value given
// (0 when none does). In float32, as Keras's variables: a rate equal to the value counts.
class RateAtRate : public Metric {
 public:
  enum Rate { kSensitivity, kSpecificity, kPrecision };  // recall is sensitivity
  RateAtRate(const Json& c, const char* cls, const char* value_key, Rate constrained, Rate dependent)
      : Metric(c, default_name(cls)), cls_(cls), constrained_(constrained), dependent_(dependent) {
    check_keys(c, cls_, {value_key, "num_thresholds", "class_id"});
    const Json value = c.is_object() && c.contains(value_key) ? c[value_key] : Json();
    KCPP_CHECK(value.is_number(), ValueError, cls_, " needs `", value_key, "`, a number in [0, 1]. Received: ",
               value_key, "=", value.dump());
    value_ = value.get<double>();
    KCPP_CHECK(value_ >= 0 && value_ <= 1, ValueError, "Argument `", value_key, "` must be in the range [0, 1]. "
               "Received: ", value_key, "=", value.dump());
    num_thresholds_ = int_or(c, "num_thresholds", 200, cls_);
    KCPP_CHECK(num_thresholds_ > 0, ValueError, "Argument `num_thresholds` must be an integer > 0. Received: "
               "num_thresholds=", num_thresholds_);
    class_id_ = int_or(c, "class_id", -1, cls_);
    if (num_thresholds_ == 1) {
      m_.thresholds = {0.5f};
    } else {
      m_.thresholds.push_back(0.f);
      for (int64_t i = 0; i < num_thresholds_ - 2; ++i)
        m_.thresholds.push_back(static_cast<float>((static_cast<double>(i) + 1) * 1.0 / static_cast<double>(num_thresholds_ - 1)));
      m_.thresholds.push_back(1.f);
      m_.evenly = true;
    }
    m_.reset();
    config_ = Json{{"class_id", class_id_ < 0 ? Json() : Json(class_id_)}, {"num_thresholds", num_thresholds_},
                   {value_key, value_}};
  }
  std::string class_name() const override { return cls_; }
  void update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) override {
    update_confusion(m_, y_true, y_pred, sample_weight, -1, class_id_, false, name());
  }
  void reset_state() override { m_.reset(); }
  void visit_state(StateVisitor& v) override { m_.visit(v); }
  double result() const override {
    float best = 0.f;
    for (size_t i = 0; i < m_.tp.size(); ++i)
      if (rate(constrained_, i) >= static_cast<float>(value_)) best = std::max(best, rate(dependent_, i));
    return best;
  }

 private:
  static std::string default_name(const char* cls) {
    const std::string c = cls;
    return c == "SensitivityAtSpecificity" ? "sensitivity_at_specificity"
           : c == "SpecificityAtSensitivity" ? "specificity_at_sensitivity"
           : c == "PrecisionAtRecall"        ? "precision_at_recall"
                                             : "recall_at_precision";
  }
  float rate(Rate r, size_t i) const {
    const float tp = static_cast<float>(m_.tp[i]), fp = static_cast<float>(m_.fp[i]);
    const float tn = static_cast<float>(m_.tn[i]), fn = static_cast<float>(m_.fn[i]);
    auto no_nan32 = [](float a, float b) { return b == 0.f ? 0.f : a / b; };
    return r == kSensitivity ? no_nan32(tp, tp + fn) : r == kSpecificity ? no_nan32(tn, tn + fp) : no_nan32(tp, tp + fp);
  }
  std::string cls_;
  Rate constrained_, dependent_;
  double value_ = 0;
  int64_t num_thresholds_ = 200, class_id_ = -1;
  Confusion m_;
};

}  // namespace

MetricPtr make_confusion_metric(const std::string& cls, const Json& c) {
  if (cls == "Precision") return std::make_shared<PrecisionRecall>(c, false);
  if (cls == "Recall") return std::make_shared<PrecisionRecall>(c, true);
  if (cls == "AUC") return std::make_shared<AUC>(c);
  using R = RateAtRate;
  if (cls == "SensitivityAtSpecificity")
    return std::make_shared<R>(c, "SensitivityAtSpecificity", "specificity", R::kSpecificity, R::kSensitivity);
  if (cls == "SpecificityAtSensitivity")
    return std::make_shared<R>(c, "SpecificityAtSensitivity", "sensitivity", R::kSensitivity, R::kSpecificity);
  if (cls == "PrecisionAtRecall") return std::make_shared<R>(c, "PrecisionAtRecall", "recall", R::kSensitivity, R::kPrecision);
  if (cls == "RecallAtPrecision") return std::make_shared<R>(c, "RecallAtPrecision", "precision", R::kPrecision, R::kSensitivity);
  if (cls == "TruePositives") return std::make_shared<ConditionCount>(c, ConditionCount::kTP, "TruePositives", "true_positives");
  if (cls == "FalsePositives") return std::make_shared<ConditionCount>(c, ConditionCount::kFP, "FalsePositives", "false_positives");
  if (cls == "TrueNegatives") return std::make_shared<ConditionCount>(c, ConditionCount::kTN, "TrueNegatives", "true_negatives");
  if (cls == "FalseNegatives") return std::make_shared<ConditionCount>(c, ConditionCount::kFN, "FalseNegatives", "false_negatives");
  return nullptr;
}

}  // namespace kerascpp::metrics::detail
