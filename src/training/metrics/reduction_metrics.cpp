// Sum and MeanMetricWrapper(fn=...) of keras/src/metrics/reduction_metrics.py (Mean is in metric.cpp).
#include "training/metrics/metric_utils.h"

namespace kerascpp::metrics::detail {
namespace {

// The weighted sum of the values given (update_state(values, sample_weight) as Keras's; given as a
// compile metric, Keras hands it y_true as the values and y_pred as their weights, and so does kerascpp).
class Sum : public Metric {
 public:
  explicit Sum(const Json& c) : Metric(c, "sum") { check_keys(c, "Sum", {}); }
  std::string class_name() const override { return "Sum"; }
  void update_state(const Tensor& values, const Tensor& second, const Tensor& sample_weight) override {
    // Keras's signature is update_state(values, sample_weight): the second argument is the weight.
    const Tensor& weight = sample_weight.defined() ? sample_weight : second;
    NdArray v = to_nd(values, name(), "values");
    if (weight.defined()) {
      NdArray w = to_nd(weight, name(), "sample_weight");
      squeeze_or_expand(v, w);
      const Shape s = broadcast_shapes(v.shape, w.shape, name());
      v = broadcast_to(v, s, name());
      w = broadcast_to(w, s, name());
      for (size_t i = 0; i < v.v.size(); ++i) v.v[i] *= w.v[i];
    }
    for (double x : v.v) total_ += static_cast<float>(x);
  }
  double result() const override { return static_cast<float>(total_); }
  void reset_state() override { total_ = 0; }
  void visit_state(StateVisitor& visit) override { visit(total_); }

 private:
  double total_ = 0;
};

// The function a MeanMetricWrapper config names: "mean_squared_error", or Keras 3's serialised
// {"class_name": "function", "config": "mean_squared_error"}.
std::string function_name(const Json& fn) {
  if (fn.is_string()) return fn.get<std::string>();
  if (fn.is_object() && fn.value("class_name", std::string()) == "function" && fn.contains("config") &&
      fn["config"].is_string())
    return fn["config"].get<std::string>();
  KCPP_THROW(ValueError, "MeanMetricWrapper: `fn` must name a Keras loss or metric function "
             "(\"mean_squared_error\", \"binary_accuracy\"...). Received: fn=", fn.dump());
}

// keras.metrics.MeanMetricWrapper(fn, name, dtype, **kwargs): the weighted mean of fn(y_true, y_pred,
// **kwargs) per sample. fn is one of Keras's functions: the metric of that name that averages it
// (MeanSquaredError for mean_squared_error, BinaryAccuracy for binary_accuracy) computes the values,
// with the kwargs as its options.
class FunctionWrapper : public MeanMetricWrapper {
 public:
  explicit FunctionWrapper(const Json& c) : MeanMetricWrapper(c, "MeanMetricWrapper", "mean_metric_wrapper") {
    KCPP_CHECK(c.is_object() && c.contains("fn"), ValueError,
               "MeanMetricWrapper needs `fn`, the function it averages. Received: ", c.dump());
    const std::string fn = function_name(c["fn"]);
    Json options = Json::object();
    for (const auto& [k, v] : c.items())
      if (k != "fn" && k != "name" && k != "dtype") options[k] = v;
    MetricPtr inner;
    try {
      inner = metrics::get(Json{{"class_name", class_of(fn)}, {"config", options}});
    } catch (const ValueError& e) {
      KCPP_THROW(ValueError, "MeanMetricWrapper(fn=", fn, "): ", e.what());
    }
    inner_ = std::dynamic_pointer_cast<MeanMetricWrapper>(inner);
    KCPP_CHECK(inner_ != nullptr, ValueError, "MeanMetricWrapper: `", fn,
               "` is not a function Keras averages per sample (its metric ", inner->class_name(), " is not a mean).");
    config_ = options;
    config_["fn"] = Json{{"module", "builtins"}, {"class_name", "function"}, {"config", fn}, {"registered_name", "function"}};
  }

 protected:
  NdArray values(const Tensor& y_true, const Tensor& y_pred) const override {
    return inner_->sample_values(y_true, y_pred);
  }

 private:
  // The metric class averaging a function: what metrics::get resolves the function's name to.
  static std::string class_of(const std::string& fn) {
    if (fn == "accuracy") return "Accuracy";  // keras.metrics.accuracy: exact equality, not get()'s resolution
    return metrics::get(fn)->class_name();
  }
  std::shared_ptr<MeanMetricWrapper> inner_;
};

}  // namespace

MetricPtr make_reduction_metric(const std::string& class_name, const Json& config) {
  if (class_name == "Sum") return std::make_shared<Sum>(config);
  if (class_name == "MeanMetricWrapper") return std::make_shared<FunctionWrapper>(config);
  return nullptr;
}

}  // namespace kerascpp::metrics::detail
