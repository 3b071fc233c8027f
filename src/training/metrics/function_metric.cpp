// A metric written as a function of keras.ops (metrics::from_function): the mean of the traced
// graph's per-sample values, computed without a tape.
#include "kerascpp/losses.h"
#include "kerascpp/model.h"
#include "ops/tape.h"
#include "training/losses/loss_utils.h"
#include "training/metrics/metric_utils.h"

namespace kerascpp::metrics {
namespace {

class FunctionMetric : public detail::MeanMetricWrapper {
 public:
  FunctionMetric(std::shared_ptr<const Model> function, const std::string& name, const Json& serialized,
                 losses::Retrace retrace)
      : MeanMetricWrapper(Json{{"name", name}}, "MeanMetricWrapper", name),
        traces_(std::move(function), std::move(retrace), "Metric", name) {
    config_["fn"] = serialized;
  }
  // compile_config records the function itself, as Keras 3 does ({"class_name": "function", ...}), so
  // that Keras reloads it from custom_objects.
  Json serialize() const override { return config_["fn"]; }

 protected:
  detail::NdArray values(const Tensor& y_true, const Tensor& y_pred) const override {
    ops::NoRecord no_record;  // metrics are never differentiated
    auto [function, aligned] = traces_.for_batch(y_true, y_pred);
    const Tensor t = losses::detail::as_float(aligned, name(), "y_true");
    const Tensor p = losses::detail::as_float(y_pred, name(), "y_pred");
    return detail::to_nd(function->graph().call({t, p}, CallContext())[0], name(), "values");
  }

 private:
  losses::FunctionTraces traces_;
};

}  // namespace

MetricPtr from_function(std::shared_ptr<const Model> function, const std::string& name, const Json& serialized,
                        losses::Retrace retrace) {
  return std::make_shared<FunctionMetric>(std::move(function), name, serialized, std::move(retrace));
}

}  // namespace kerascpp::metrics
