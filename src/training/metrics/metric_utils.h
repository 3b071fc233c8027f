// What the metric files share: small n-d arrays of doubles (metrics are never differentiated, so
// they compute with plain loops), Keras's rank alignment, broadcasting and the mean over trailing
// axes, and the MeanMetricWrapper base of the metrics that average a per-sample value.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "kerascpp/metrics.h"

namespace kerascpp::metrics::detail {

struct NdArray {
  Shape shape;
  std::vector<double> v;
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t dim(int i) const { return shape.at(i < 0 ? i + rank() : i); }
};

NdArray to_nd(const Tensor& t, const std::string& who, const char* what);
Tensor to_tensor(const NdArray& a);  // float32, as Keras's metric values (floatx)
// keras/src/losses/loss.py squeeze_or_expand_to_same_rank on x1, x2.
void squeeze_or_expand(NdArray& x1, NdArray& x2, bool expand_rank_1 = true);
// numpy broadcasting; ValueError naming `who` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& who);
NdArray broadcast_to(const NdArray& a, const Shape& shape, const std::string& who);
// Mean over the axes [axis, rank): the shape keeps its first `axis` dims.
NdArray mean_from(const NdArray& a, int axis);
// Index of the largest value along the last axis (first on ties, as tf.argmax).
NdArray argmax_last(const NdArray& a);

// result() of a metric that reports through result_array(): its one value, or a ValueError naming the
// metric when its result is an array.
double scalar_result(const Metric& m);

// ValueError naming the class and the key unless config holds only "name", "dtype" and `options`.
void check_keys(const Json& config, const std::string& class_name, const std::vector<const char*>& options);
std::string name_in(const Json& config, const std::string& fallback);

// keras/src/metrics/reduction_metrics.py MeanMetricWrapper: values(y_true, y_pred) per sample,
// averaged by Mean with the sample weights.
class MeanMetricWrapper : public Mean {
 public:
  MeanMetricWrapper(const Json& config, const std::string& class_name, const std::string& default_name);
  std::string class_name() const override { return class_name_; }
  void update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight = Tensor()) override;
  Json get_config() const override;
  // The per-sample values this metric averages (keras.metrics.MeanMetricWrapper(fn=...) borrows them).
  NdArray sample_values(const Tensor& y_true, const Tensor& y_pred) const { return values(y_true, y_pred); }

 protected:
  virtual NdArray values(const Tensor& y_true, const Tensor& y_pred) const = 0;

 private:
  std::string class_name_;
};

// Factories for get.cpp; config is the "config" of a {"class_name", "config"} identifier.
MetricPtr make_accuracy_metric(const std::string& class_name, const Json& config);   // accuracy_metrics.cpp
MetricPtr make_regression_metric(const std::string& class_name, const Json& config); // regression_metrics.cpp
MetricPtr make_confusion_metric(const std::string& class_name, const Json& config);   // confusion_metrics.cpp
MetricPtr make_iou_metric(const std::string& class_name, const Json& config);         // iou_metrics.cpp
MetricPtr make_f_score_metric(const std::string& class_name, const Json& config);     // f_score_metrics.cpp
MetricPtr make_reduction_metric(const std::string& class_name, const Json& config);   // reduction_metrics.cpp
// nullptr when class_name is not of the family.

}  // namespace kerascpp::metrics::detail
