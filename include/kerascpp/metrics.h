// Metrics: the keras.metrics classes. A metric accumulates over batches (update_state) and reports
// one number (result), or an array (result_array); fit and evaluate reset it every epoch. Metrics are
// never differentiated.
//
//   metrics::MetricPtr acc = metrics::get("accuracy", {-1, 10}, "categorical_crossentropy");
//   acc->update_state(y_true, y_pred);
//   double a = acc->result();
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kerascpp/class_info.h"
#include "kerascpp/tensor.h"

namespace kerascpp {
class Model;
}

namespace kerascpp::metrics {

using Json = nlohmann::json;

class Metric {
 public:
  explicit Metric(const Json& config, const std::string& default_name);
  virtual ~Metric() = default;

  virtual std::string class_name() const = 0;  // "BinaryAccuracy"
  const std::string& name() const { return name_; }  // the key in fit's logs

  // y_true of any dtype; sample_weight undefined or broadcastable to the per-sample values.
  virtual void update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight = Tensor()) = 0;
  virtual double result() const = 0;
  // A metric whose result is an array (Precision / Recall / TruePositives... with several thresholds,
  // F1Score / FBetaScore with average=None) reports it by result_array(); its result() is a ValueError.
  virtual bool array_result() const { return false; }
  virtual std::vector<double> result_array() const { return {result()}; }
  virtual void reset_state() = 0;
  // The accumulators update_state adds to, in a fixed order. Data-parallel training sums them across
  // workers before it reads the result, as Keras sums its metric variables (aggregation "sum").
  struct StateVisitor {
    virtual ~StateVisitor() = default;
    virtual void operator()(double& v) = 0;
    virtual void operator()(float& v) = 0;
    virtual void operator()(std::vector<double>& v) = 0;
    virtual void operator()(std::vector<float>& v) = 0;
  };
  // The default refuses (NotImplementedError naming the metric): a metric that cannot be summed. A
  // metric written in Python shows its add_variable state (python/src/bind_training.cpp).
  virtual void visit_state(StateVisitor& visit);
  virtual Json get_config() const;
  // How compile_config records the metric: {"module": "keras.metrics", "class_name", "config",
  // "registered_name"}; a metric written in Python gives its own module and class, a metric function
  // the function itself ({"class_name": "function", ...}), as Keras 3 records them.
  virtual Json serialize() const;

 protected:
  Json config_;

 private:
  std::string name_;
};

using MetricPtr = std::shared_ptr<Metric>;

// A metric by Keras identifier, as model.compile(metrics=[...]) resolves it:
//   - "accuracy" / "acc" becomes BinaryAccuracy, SparseCategoricalAccuracy or CategoricalAccuracy
//     from the output shape and the loss (keras/src/trainers/compile_utils.py), named as given;
//   - "mae", "mse", "precision", "AUC"... function or class names; {"class_name", "config"} objects.
// y_pred_shape: the model output's shape (batch -1); loss_name: the compiled loss's function or
// class name ("" if none). ValueError naming an unknown identifier.
MetricPtr get(const Json& identifier, const Shape& y_pred_shape = {}, const std::string& loss_name = "");
// A metric written as a function of keras.ops (Keras wraps one in MeanMetricWrapper): the weighted mean
// of the per-sample values of `function`, a model of two inputs (y_true, y_pred) traced from the
// user's function as losses::from_function. serialized: how the config records the function.
// retrace: traces it again for y_true of another shape (losses::Retrace).
MetricPtr from_function(std::shared_ptr<const Model> function, const std::string& name, const Json& serialized,
                        std::function<std::shared_ptr<const Model>(const Shape&)> retrace = {});
// Every class name get() knows, and each class's arguments and identifiers (one list: metric_list.inc).
std::vector<std::string> known_metrics();
std::vector<ClassInfo> metric_classes();

// keras.metrics.Mean: the weighted mean of the values given (fit's "loss" entry).
class Mean : public Metric {
 public:
  explicit Mean(const std::string& name = "mean");
  std::string class_name() const override { return "Mean"; }
  void update_state(const Tensor& values, const Tensor& unused, const Tensor& sample_weight) override;
  void add(double value, double weight = 1.0);
  double result() const override;
  void reset_state() override;
  void visit_state(StateVisitor& visit) override;

 private:
  double total_ = 0, count_ = 0;
};

}  // namespace kerascpp::metrics
