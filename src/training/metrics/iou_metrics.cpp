// The intersection-over-union metrics of keras/src/metrics/iou_metrics.py: IoU, MeanIoU, BinaryIoU,
// OneHotIoU and OneHotMeanIoU. Each accumulates a num_classes x num_classes confusion matrix (rows:
// true class, columns: predicted class) weighted by the sample weights, and reports the mean over the
// target classes of tp / (tp + fp + fn), leaving out classes that never occurred.
//
// Keras computes them in the metric's dtype, int64 unless given: labels, predictions and weights are
// converted to it, so a float prediction counts as its integer part and a weight of 0.5 as 0. kerascpp
// does the same; with a float dtype only the labels are made integers (tf.math.confusion_matrix).
#include <cmath>

#include "training/metrics/metric_utils.h"

namespace kerascpp::metrics::detail {
namespace {

constexpr double kEpsilon = 1e-7;  // backend.epsilon()

struct IoUOptions {
  const char* cls;
  const char* default_name;
  bool fixed_sparse_y_true;  // OneHot*: y_true is one-hot, not an option
  bool mean;                 // Mean*: every class is a target
  bool binary;               // BinaryIoU: two classes, y_pred thresholded
};

class IoUMetric : public Metric {
 public:
  IoUMetric(const IoUOptions& o, const Json& c) : Metric(c, o.default_name), o_(o) {
    std::vector<const char*> keys;
    if (o.binary) keys = {"target_class_ids", "threshold"};
    else if (o.mean) keys = {"num_classes", "ignore_class", "sparse_y_pred", "axis"};
    else keys = {"num_classes", "target_class_ids", "ignore_class", "sparse_y_pred", "axis"};
    if (!o.fixed_sparse_y_true && !o.binary) keys.push_back("sparse_y_true");
    check_keys(c, o.cls, keys);
    auto get = [&](const char* key, const Json& fallback) {
      return c.is_object() && c.contains(key) && !c[key].is_null() ? c[key] : fallback;
    };
    if (o.binary) {
      num_classes_ = 2;
      const Json t = get("threshold", 0.5);
      KCPP_CHECK(t.is_number(), ValueError, o.cls, ": `threshold` must be a number. Received: threshold=", t.dump());
      threshold_ = t.get<double>();
    } else {
      const Json n = get("num_classes", Json());
      KCPP_CHECK(n.is_number_integer() && n.get<int64_t>() > 0, ValueError, o.cls,
                 ": `num_classes` must be a positive integer. Received: num_classes=", n.dump());
      num_classes_ = n.get<int64_t>();
    }
    if (o.mean) {
      for (int64_t k = 0; k < num_classes_; ++k) targets_.push_back(k);
    } else {
      const Json t = get("target_class_ids", o.binary ? Json::array({0, 1}) : Json());
      KCPP_CHECK(t.is_array() && !t.empty(), ValueError, o.cls,
                 ": `target_class_ids` must be a non-empty list of class ids. Received: target_class_ids=", t.dump());
      for (const Json& id : t) {
        KCPP_CHECK(id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() < num_classes_, ValueError,
                   o.cls, ": Target class id ", id.dump(), " is out of range, which is [0, ", num_classes_, ").");
        targets_.push_back(id.get<int64_t>());
      }
    }
    const Json ignore = get("ignore_class", Json());
    KCPP_CHECK(ignore.is_null() || ignore.is_number_integer(), ValueError, o.cls,
               ": `ignore_class` must be None or an integer. Received: ignore_class=", ignore.dump());
    has_ignore_ = ignore.is_number_integer();
    if (has_ignore_) ignore_class_ = ignore.get<int64_t>();
    auto flag = [&](const char* key, bool fallback) {
      const Json v = get(key, fallback);
      KCPP_CHECK(v.is_boolean(), ValueError, o.cls, ": `", key, "` must be a bool. Received: ", key, "=", v.dump());
      return v.get<bool>();
    };
    sparse_y_true_ = o.fixed_sparse_y_true ? false : flag("sparse_y_true", true);
    sparse_y_pred_ = flag("sparse_y_pred", !o.fixed_sparse_y_true);
    const Json axis = get("axis", -1);
    KCPP_CHECK(axis.is_number_integer(), ValueError, o.cls, ": `axis` must be an integer. Received: axis=", axis.dump());
    axis_ = axis.get<int>();
    KCPP_CHECK(axis_ == -1 || (sparse_y_true_ && sparse_y_pred_), NotImplementedError, o.cls,
               ": kerascpp takes the argmax of one-hot values over the last axis only. Received: axis=", axis_);
    const Json dtype = get("dtype", Json());
    KCPP_CHECK(dtype.is_null() || dtype.is_string(), ValueError, o.cls, ": unsupported dtype ", dtype.dump());
    integer_ = dtype.is_null() || dtype.get<std::string>().find("int") != std::string::npos;
    KCPP_CHECK(integer_ || (dtype.is_string() && dtype.get<std::string>().starts_with("float")), ValueError, o.cls,
               ": unsupported dtype ", dtype.dump());
    dtype_ = dtype.is_null() || dtype.get<std::string>() == "int" ? "int64" : dtype.get<std::string>();
    if (o.binary) config_ = Json{{"target_class_ids", targets_}, {"threshold", threshold_}};
    else if (o.mean) config_ = Json{{"num_classes", num_classes_}};
    else config_ = Json{{"num_classes", num_classes_}, {"target_class_ids", targets_}};
    if (!o.binary) {
      config_["ignore_class"] = has_ignore_ ? Json(ignore_class_) : Json();
      if (!o.fixed_sparse_y_true) config_["sparse_y_true"] = sparse_y_true_;
      config_["sparse_y_pred"] = sparse_y_pred_;
      config_["axis"] = axis_;
    }
    reset_state();
  }
  std::string class_name() const override { return o_.cls; }
  Json get_config() const override {
    Json c = Metric::get_config();
    c["dtype"] = dtype_;
    return c;
  }
  void reset_state() override { cm_.assign(static_cast<size_t>(num_classes_ * num_classes_), 0.0); }
  void visit_state(StateVisitor& v) override { v(cm_); }

  void update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) override {
    NdArray t = to_nd(y_true, name(), "y_true"), p = to_nd(y_pred, name(), "y_pred");
    if (!sparse_y_true_) t = argmax_last(t);
    if (o_.binary) {
      for (double& v : p.v) v = static_cast<float>(v) >= static_cast<float>(threshold_) ? 1.0 : 0.0;
    } else if (!sparse_y_pred_) {
      p = argmax_last(p);
    }
    KCPP_CHECK(t.v.size() == p.v.size(), ValueError, name(), ": y_true and y_pred hold different numbers of labels: ",
               shape_str(t.shape), " and ", shape_str(p.shape));
    std::vector<double> w(t.v.size(), 1.0);
    if (sample_weight.defined()) {
      const NdArray sw = to_nd(sample_weight, name(), "sample_weight");
      KCPP_CHECK(sw.v.size() == 1 || sw.v.size() == w.size(), ValueError, name(), ": sample_weight of shape ",
                 shape_str(sw.shape), " does not broadcast to the ", w.size(), " labels of y_true ",
                 shape_str(y_true.shape()));
      for (size_t i = 0; i < w.size(); ++i) w[i] = sw.v[sw.v.size() == 1 ? 0 : i];
    }
    for (size_t i = 0; i < w.size(); ++i) {
      const double weight = integer_ ? std::trunc(w[i]) : w[i];
      const int64_t a = static_cast<int64_t>(std::trunc(t.v[i])), b = static_cast<int64_t>(std::trunc(p.v[i]));
      const bool inside = a >= 0 && a < num_classes_ && b >= 0 && b < num_classes_ && !(has_ignore_ && a == ignore_class_);
      if (inside) cm_[static_cast<size_t>(a * num_classes_ + b)] += weight;  // Keras adds the masked ones to (0, 0) with weight 0
    }
  }

  double result() const override {  // in float32, as Keras
    float total = 0, valid = 0;
    for (int64_t k : targets_) {
      double row = 0, col = 0;
      for (int64_t j = 0; j < num_classes_; ++j) row += cm_[k * num_classes_ + j], col += cm_[j * num_classes_ + k];
      const double tp = cm_[k * num_classes_ + k];
      const float denominator = static_cast<float>(row + col - tp);
      if (denominator > 1e-9f) {
        total += static_cast<float>(tp) / (denominator + static_cast<float>(kEpsilon));
        valid += 1;
      }
    }
    return total / (valid + static_cast<float>(kEpsilon));
  }

 private:
  IoUOptions o_;
  int64_t num_classes_ = 0;
  std::vector<int64_t> targets_;
  bool has_ignore_ = false, sparse_y_true_ = true, sparse_y_pred_ = true, integer_ = true;
  int64_t ignore_class_ = 0;
  int axis_ = -1;
  double threshold_ = 0.5;
  std::string dtype_;
  std::vector<double> cm_;
};

const IoUOptions kIoU[] = {
    {"IoU", "io_u", false, false, false},
    {"MeanIoU", "mean_io_u", false, true, false},
    {"BinaryIoU", "binary_io_u", false, false, true},
    {"OneHotIoU", "one_hot_io_u", true, false, false},
    {"OneHotMeanIoU", "one_hot_mean_io_u", true, true, false},
};

}  // namespace

MetricPtr make_iou_metric(const std::string& class_name, const Json& config) {
  for (const IoUOptions& o : kIoU)
    if (class_name == o.cls) return std::make_shared<IoUMetric>(o, config);
  return nullptr;
}

}  // namespace kerascpp::metrics::detail
