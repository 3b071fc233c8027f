// The accuracy metrics of keras/src/metrics/accuracy_metrics.py: Accuracy, BinaryAccuracy,
// CategoricalAccuracy, SparseCategoricalAccuracy, TopKCategoricalAccuracy,
// SparseTopKCategoricalAccuracy. Each gives 1 or 0 per sample (or position), averaged by Mean.
#include <cmath>

#include "training/metrics/metric_utils.h"

namespace kerascpp::metrics::detail {
namespace {

// 1 where a == b after broadcasting, else 0.
NdArray equal(const NdArray& a, const NdArray& b, const std::string& who) {
  const Shape s = broadcast_shapes(a.shape, b.shape, who);
  const NdArray x = broadcast_to(a, s, who), y = broadcast_to(b, s, who);
  NdArray out{s, std::vector<double>(x.v.size())};
  for (size_t i = 0; i < out.v.size(); ++i) out.v[i] = x.v[i] == y.v[i] ? 1.0 : 0.0;
  return out;
}

// tf.math.in_top_k: the target's score has fewer than k scores strictly above it (ties at the
// boundary count as in); a non-finite score or a target out of range is never in.
NdArray in_top_k(const NdArray& targets, const NdArray& scores, int64_t k, const std::string& who) {
  KCPP_CHECK(scores.rank() == 2 && targets.rank() == 1 && targets.dim(0) == scores.dim(0), ValueError, who,
             ": y_true and y_pred do not fit. Received: labels shape=", shape_str(targets.shape),
             ", predictions shape=", shape_str(scores.shape));
  const int64_t c = scores.dim(1);
  NdArray out{targets.shape, std::vector<double>(targets.v.size(), 0.0)};
  for (int64_t i = 0; i < targets.dim(0); ++i) {
    const double t = targets.v[i];
    if (t < 0 || t >= static_cast<double>(c)) continue;
    const double s = scores.v[i * c + static_cast<int64_t>(t)];
    if (!std::isfinite(s)) continue;
    int64_t above = 0;
    for (int64_t j = 0; j < c; ++j) above += scores.v[i * c + j] > s;
    out.v[i] = above < k ? 1.0 : 0.0;
  }
  return out;
}

NdArray rows(NdArray a) {  // (..., c) -> (n, c)
  if (a.rank() > 2) a.shape = {shape_size(a.shape) / a.dim(-1), a.dim(-1)};
  return a;
}

class Accuracy : public MeanMetricWrapper {
 public:
  explicit Accuracy(const Json& c) : MeanMetricWrapper(c, "Accuracy", "accuracy") { check_keys(c, "Accuracy", {}); }
  NdArray values(const Tensor& y_true, const Tensor& y_pred) const override {
    NdArray t = to_nd(y_true, name(), "y_true"), p = to_nd(y_pred, name(), "y_pred");
    squeeze_or_expand(t, p);
    return equal(t, p, name());
  }
};

class BinaryAccuracy : public MeanMetricWrapper {
 public:
  explicit BinaryAccuracy(const Json& c) : MeanMetricWrapper(c, "BinaryAccuracy", "binary_accuracy") {
    check_keys(c, "BinaryAccuracy", {"threshold"});
    if (c.is_object() && c.contains("threshold") && !c["threshold"].is_null()) {
      KCPP_CHECK(c["threshold"].is_number(), ValueError, "BinaryAccuracy: `threshold` must be a number. Received: ",
                 c["threshold"].dump());
      threshold_ = c["threshold"].get<double>();
    }
    config_["threshold"] = threshold_;
  }
  NdArray values(const Tensor& y_true, const Tensor& y_pred) const override {
    NdArray t = to_nd(y_true, name(), "y_true"), p = to_nd(y_pred, name(), "y_pred");
    squeeze_or_expand(t, p);
    // greater(y_pred, threshold) in float32, as Keras converts the threshold to a float32 tensor.
    const float thr = static_cast<float>(threshold_);
    for (double& v : p.v) v = static_cast<float>(v) > thr ? 1.0 : 0.0;
    return equal(t, p, name());
  }

 private:
  double threshold_ = 0.5;
};

class CategoricalAccuracy : public MeanMetricWrapper {
 public:
  explicit CategoricalAccuracy(const Json& c) : MeanMetricWrapper(c, "CategoricalAccuracy", "categorical_accuracy") {
    check_keys(c, "CategoricalAccuracy", {});
  }
  NdArray values(const Tensor& y_true, const Tensor& y_pred) const override {
    NdArray t = argmax_last(to_nd(y_true, name(), "y_true"));
    const NdArray p = argmax_last(to_nd(y_pred, name(), "y_pred"));
    const Shape t_shape = t.shape;
    const bool reshape = t.rank() == y_pred.rank();
    if (reshape) t.shape.pop_back();
    NdArray m = equal(t, p, name());
    if (reshape) m.shape = t_shape;
    return m;
  }
};

class SparseCategoricalAccuracy : public MeanMetricWrapper {
 public:
  explicit SparseCategoricalAccuracy(const Json& c)
      : MeanMetricWrapper(c, "SparseCategoricalAccuracy", "sparse_categorical_accuracy") {
    check_keys(c, "SparseCategoricalAccuracy", {});
  }
  NdArray values(const Tensor& y_true, const Tensor& y_pred) const override {
    NdArray t = to_nd(y_true, name(), "y_true");
    const NdArray p = argmax_last(to_nd(y_pred, name(), "y_pred"));
    const Shape t_shape = t.shape;
    const bool reshape = t.rank() == y_pred.rank() && t.rank() > 0 && t.dim(-1) == 1;
    if (reshape) t.shape.pop_back();
    NdArray m = equal(t, p, name());
    if (reshape) m.shape = t_shape;
    if (m.rank() > 1 && m.dim(-1) == 1) m.shape.pop_back();
    return m;
  }
};

class TopK : public MeanMetricWrapper {
 public:
  TopK(const Json& c, const char* cls, const char* default_name, bool sparse)
      : MeanMetricWrapper(c, cls, default_name), sparse_(sparse) {
    check_keys(c, cls, {"k"});
    if (c.is_object() && c.contains("k") && !c["k"].is_null()) {
      KCPP_CHECK(c["k"].is_number_integer() && c["k"].get<int64_t>() > 0, ValueError, cls,
                 ": `k` must be a positive integer. Received: k=", c["k"].dump());
      k_ = c["k"].get<int64_t>();
    }
    config_["k"] = k_;
  }
  NdArray values(const Tensor& y_true, const Tensor& y_pred) const override {
    NdArray t = to_nd(y_true, name(), "y_true");
    if (sparse_)
      for (double& v : t.v) v = std::trunc(v);  // cast to int32
    else
      t = argmax_last(t);
    const Shape t_shape = t.shape;
    NdArray flat = t;
    if (flat.rank() > 1) flat.shape = {shape_size(flat.shape)};
    NdArray m = in_top_k(flat, rows(to_nd(y_pred, name(), "y_pred")), k_, name());
    m.shape = t_shape;
    return m;
  }

 private:
  bool sparse_;
  int64_t k_ = 5;
};

}  // namespace

// "accuracy" for (batch, classes) predictions under a loss that does not tell the labels' form (a
// Python function): Keras's is_binary_or_sparse_categorical reads it from y_true, sparse when y_true
// has a lower rank or a last dim of 1; so does this, batch by batch, under the class it resolves to.
class AccuracyByLabels : public MeanMetricWrapper {
 public:
  explicit AccuracyByLabels(const Json& c)
      : MeanMetricWrapper(c, "CategoricalAccuracy", "accuracy"), categorical_(c), sparse_(c) {}
  std::string class_name() const override { return sparse_seen_ ? "SparseCategoricalAccuracy" : "CategoricalAccuracy"; }
  void update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) override {
    sparse_seen_ = y_true.rank() < y_pred.rank() ||
                   (y_true.rank() > 0 && y_pred.rank() > 0 && y_true.dim(-1) == 1 && y_pred.dim(-1) > 1);
    MeanMetricWrapper::update_state(y_true, y_pred, sample_weight);
  }
  NdArray values(const Tensor& y_true, const Tensor& y_pred) const override {
    return sparse_seen_ ? sparse_.sample_values(y_true, y_pred) : categorical_.sample_values(y_true, y_pred);
  }

 private:
  CategoricalAccuracy categorical_;
  SparseCategoricalAccuracy sparse_;
  bool sparse_seen_ = false;
};

MetricPtr make_accuracy_metric(const std::string& cls, const Json& c) {
  if (cls == "AccuracyByLabels") return std::make_shared<AccuracyByLabels>(c);
  if (cls == "Accuracy") return std::make_shared<Accuracy>(c);
  if (cls == "BinaryAccuracy") return std::make_shared<BinaryAccuracy>(c);
  if (cls == "CategoricalAccuracy") return std::make_shared<CategoricalAccuracy>(c);
  if (cls == "SparseCategoricalAccuracy") return std::make_shared<SparseCategoricalAccuracy>(c);
  if (cls == "TopKCategoricalAccuracy")
    return std::make_shared<TopK>(c, "TopKCategoricalAccuracy", "top_k_categorical_accuracy", false);
  if (cls == "SparseTopKCategoricalAccuracy")
    return std::make_shared<TopK>(c, "SparseTopKCategoricalAccuracy", "sparse_top_k_categorical_accuracy", true);
  return nullptr;
}

}  // namespace kerascpp::metrics::detail
