// FBetaScore and F1Score (keras/src/metrics/f_score_metrics.py): true positives, false positives and
// false negatives per class (or over every class, average="micro") of the predictions made binary
// (the row's largest value, or y_pred > threshold), weighted by the sample weights; the score is
// (1 + beta^2) P R / (beta^2 P + R), averaged over the classes (macro), by their support (weighted),
// or from the pooled counts (micro), or one score per class (average=None: an array). Computed in
// float32 as Keras's variables.
#include <cmath>

#include "training/metrics/metric_utils.h"

namespace kerascpp::metrics::detail {
namespace {

constexpr float kEpsilon = 1e-7f;  // backend.epsilon()

class FBetaScore : public Metric {
 public:
  FBetaScore(const Json& c, const char* cls, const char* default_name, bool f1) : Metric(c, default_name), cls_(cls) {
    check_keys(c, cls, f1 ? std::vector<const char*>{"average", "threshold"}
                          : std::vector<const char*>{"average", "beta", "threshold"});
    auto get = [&](const char* key) { return c.is_object() && c.contains(key) ? c[key] : Json(); };
    const Json average = get("average");
    KCPP_CHECK(average.is_null() || (average.is_string() && (average == "micro" || average == "macro" || average == "weighted")),
               ValueError, "Invalid `average` argument value. Expected one of: {None, 'micro', 'macro', 'weighted'}. "
               "Received: average=", average.dump());
    average_ = average.is_null() ? "" : average.get<std::string>();  // "": one score per class (an array)
    const Json beta = f1 ? Json(1.0) : get("beta").is_null() ? Json(1.0) : get("beta");
    KCPP_CHECK(beta.is_number_float() || beta.is_number_integer(), ValueError,
               "Invalid `beta` argument value. It should be a Python float. Received: beta=", beta.dump());
    beta_ = beta.get<double>();
    KCPP_CHECK(beta_ > 0, ValueError, "Invalid `beta` argument value. It should be > 0. Received: beta=", beta.dump());
    const Json threshold = get("threshold");
    if (!threshold.is_null()) {
      KCPP_CHECK(threshold.is_number(), ValueError,
                 "Invalid `threshold` argument value. It should be a Python float. Received: threshold=", threshold.dump());
      threshold_ = threshold.get<double>();
      KCPP_CHECK(threshold_ > 0 && threshold_ <= 1, ValueError,
                 "Invalid `threshold` argument value. It should verify 0 < threshold <= 1. Received: threshold=",
                 threshold.dump());
      has_threshold_ = true;
    }
    config_ = Json{{"average", average_.empty() ? Json() : Json(average_)}, {"threshold", has_threshold_ ? Json(threshold_) : Json()}};
    if (!f1) config_["beta"] = beta_;
  }
  std::string class_name() const override { return cls_; }
  void reset_state() override { tp_.clear(), fp_.clear(), fn_.clear(), support_.clear(); }
  void visit_state(StateVisitor& v) override { v(tp_), v(fp_), v(fn_), v(support_); }

  void update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) override {
    const NdArray t = to_nd(y_true, name(), "y_true"), p = to_nd(y_pred, name(), "y_pred");
    KCPP_CHECK(t.rank() == 2 && p.rank() == 2, ValueError, cls_, " expects 2D inputs with shape (batch_size, "
               "output_dim). Received input shapes: y_pred.shape=", shape_str(p.shape), " and y_true.shape=",
               shape_str(t.shape), ".");
    KCPP_CHECK(t.shape == p.shape, ValueError, cls_, ": y_true ", shape_str(t.shape), " and y_pred ",
               shape_str(p.shape), " differ.");
    const int64_t n = p.dim(0), k = p.dim(1);
    const size_t slots = average_ == "micro" ? 1 : static_cast<size_t>(k);
    if (tp_.empty()) tp_ = fp_ = fn_ = support_ = std::vector<float>(slots, 0.f);
    KCPP_CHECK(tp_.size() == slots, ValueError, cls_, " was built for ", tp_.size(), " classes; y_pred has ", k);
    NdArray w;
    if (sample_weight.defined()) {
      w = to_nd(sample_weight, name(), "sample_weight");
      KCPP_CHECK(w.v.size() == 1 || w.v.size() == static_cast<size_t>(n), ValueError, cls_, ": sample_weight of shape ",
                 shape_str(w.shape), " does not fit ", n, " samples");
    }
    std::vector<float> tp(slots, 0.f), fp(slots, 0.f), fn(slots, 0.f), support(slots, 0.f);
    for (int64_t r = 0; r < n; ++r) {
      const double* row = p.v.data() + r * k;
      float top = static_cast<float>(row[0]);
      for (int64_t j = 1; j < k; ++j) top = std::max(top, static_cast<float>(row[j]));
      const float weight = w.v.empty() ? 1.f : static_cast<float>(w.v[w.v.size() == 1 ? 0 : r]);
      for (int64_t j = 0; j < k; ++j) {
        const float v = static_cast<float>(row[j]);
        const float pred = has_threshold_ ? (v > static_cast<float>(threshold_) ? 1.f : 0.f)
                                          : (v >= top && std::fabs(v) > 1e-9f ? 1.f : 0.f);
        const float truth = static_cast<float>(t.v[r * k + j]);
        const size_t s = slots == 1 ? 0 : static_cast<size_t>(j);
        tp[s] += pred * truth * weight;
        fp[s] += pred * (1 - truth) * weight;
        fn[s] += (1 - pred) * truth * weight;
        support[s] += truth * weight;
      }
    }
    for (size_t s = 0; s < slots; ++s) tp_[s] += tp[s], fp_[s] += fp[s], fn_[s] += fn[s], support_[s] += support[s];
  }

  bool array_result() const override { return average_.empty(); }
  std::vector<double> result_array() const override {
    const float b2 = static_cast<float>(beta_ * beta_);
    std::vector<double> score(tp_.size());
    for (size_t s = 0; s < tp_.size(); ++s) {
      const float precision = tp_[s] / (tp_[s] + fp_[s] + kEpsilon);
      const float recall = tp_[s] / (tp_[s] + fn_[s] + kEpsilon);
      score[s] = precision * recall / (b2 * precision + recall + kEpsilon) * (1 + b2);
    }
    if (average_.empty()) return score;  // before any update: no classes yet (Keras builds them on the first)
    float out = 0;
    if (average_ == "weighted") {
      float total = 0;
      for (float v : support_) total += v;
      for (size_t s = 0; s < score.size(); ++s) out += static_cast<float>(score[s]) * (support_[s] / (total + kEpsilon));
    } else if (!score.empty()) {
      for (double v : score) out += static_cast<float>(v);
      out /= static_cast<float>(score.size());
    }
    return {out};
  }
  double result() const override { return scalar_result(*this); }

 private:
  std::string cls_;
  std::string average_;
  double beta_ = 1.0, threshold_ = 0.5;
  bool has_threshold_ = false;
  std::vector<float> tp_, fp_, fn_, support_;
};

}  // namespace

MetricPtr make_f_score_metric(const std::string& class_name, const Json& config) {
  if (class_name == "FBetaScore") return std::make_shared<FBetaScore>(config, "FBetaScore", "fbeta_score", false);
  if (class_name == "F1Score") return std::make_shared<FBetaScore>(config, "F1Score", "f1_score", true);
  return nullptr;
}

}  // namespace kerascpp::metrics::detail
