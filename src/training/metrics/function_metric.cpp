// A metric written as a function of keras.ops (metrics::from_function): the mean of the traced
// graph's per-sample values, computed without a tape.
#include "kerascpp/losses.h"
#include "kerascpp/model.h"
#include "ops/tape.h"
#include "training/metrics/metric_utils.h"

namespace kerascpp::metrics {
namespace {

class FunctionMetric : public detail::MeanMetricWrapper {
 public:
  FunctionMetric(std::shared_ptr<const Model> function, const std::string& name, const Json& serialized)
      : MeanMetricWrapper(Json{{"name", name}}, "MeanMetricWrapper", name), function_(std::move(function)) {
    KCPP_CHECK(function_ && function_->input_shapes().size() == 2 && function_->output_shapes().size() == 1,
               ValueError, "Metric '", name, "': a metric function takes (y_true, y_pred) and gives one tensor");
    config_["fn"] = serialized;
  }

 protected:
  detail::NdArray values(const Tensor& y_true, const Tensor& y_pred) const override {
    ops::NoRecord no_record;  // metrics are never differentiated
    const Tensor aligned = losses::traced_y_true(*function_, "Metric", name(), y_true, y_pred);
    const Tensor t = aligned.dtype() == DType::float32 ? aligned : aligned.astype(DType::float32);
    const Tensor p = y_pred.dtype() == DType::float32 ? y_pred : y_pred.astype(DType::float32);
    return detail::to_nd(function_->graph().call({t, p}, CallContext())[0], name(), "values");
  }

 private:
  std::shared_ptr<const Model> function_;
};

}  // namespace

MetricPtr from_function(std::shared_ptr<const Model> function, const std::string& name, const Json& serialized) {
  return std::make_shared<FunctionMetric>(std::move(function), name, serialized);
}

}  // namespace kerascpp::metrics
