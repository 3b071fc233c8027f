// The Metric base class, Mean and MeanMetricWrapper (keras/src/metrics/metric.py and
// reduction_metrics.py). Totals are kept in double; Keras keeps float32 variables, so results
// agree to float32 rounding.
#include "training/metrics/metric_utils.h"

namespace kerascpp::metrics {

Metric::Metric(const Json& config, const std::string& default_name)
    : config_(Json::object()), name_(detail::name_in(config, default_name)) {}

// Keras 3's Metric.get_config: {"name", "dtype"} and the class's options (config_).
void Metric::visit_state(StateVisitor&) {
  KCPP_THROW(NotImplementedError, "Metric ", class_name(), " '", name(), "' cannot be summed across workers (it "
             "shows no accumulators), so data-parallel training cannot report it: compile without it, or train on "
             "one worker");
}

Json Metric::get_config() const {
  Json c = config_;
  c["name"] = name_;
  c["dtype"] = "float32";
  return c;
}

Json Metric::serialize() const {
  return Json{{"module", "keras.metrics"}, {"class_name", class_name()}, {"config", get_config()},
              {"registered_name", nullptr}};
}

Mean::Mean(const std::string& name) : Metric(Json{{"name", name}}, name) {}

namespace {

// keras/src/metrics/reduction_metrics.py reduce_to_samplewise_values with reduce_fn = mean:
// returns the per-sample values, and the per-sample weights in *sw.
detail::NdArray samplewise(detail::NdArray values, detail::NdArray* sw, const std::string& who) {
  using detail::mean_from;
  if (sw) {
    detail::squeeze_or_expand(values, *sw);
    const int wn = sw->rank();
    if (values.rank() > wn) values = mean_from(values, wn);
    *sw = detail::broadcast_to(*sw, values.shape, who + " (sample_weight)");
    for (size_t i = 0; i < values.v.size(); ++i) values.v[i] *= sw->v[i];
    if (wn > 1) *sw = mean_from(*sw, 1);
  }
  if (values.rank() > 1) values = mean_from(values, 1);
  return values;
}

}  // namespace

void Mean::update_state(const Tensor& values, const Tensor& unused, const Tensor& sample_weight) {
  detail::NdArray sw;
  const bool weighted = sample_weight.defined();
  if (weighted) sw = detail::to_nd(sample_weight, name(), "sample_weight");
  const detail::NdArray v = samplewise(detail::to_nd(values, name(), "values"), weighted ? &sw : nullptr, name());
  double total = 0, count = 0;
  for (double x : v.v) total += x;
  if (weighted)
    for (double w : sw.v) count += w;
  else
    count = v.rank() >= 1 ? static_cast<double>(v.dim(0)) : 1.0;
  total_ += total;
  count_ += count;
}

void Mean::add(double value, double weight) {
  total_ += value * weight;
  count_ += weight;
}

double Mean::result() const { return count_ == 0 ? 0.0 : total_ / count_; }  // ops.divide_no_nan

void Mean::reset_state() { total_ = count_ = 0; }

void Mean::visit_state(StateVisitor& visit) {
  visit(total_);
  visit(count_);
}

namespace detail {

MeanMetricWrapper::MeanMetricWrapper(const Json& config, const std::string& class_name,
                                     const std::string& default_name)
    : Mean(name_in(config, default_name)), class_name_(class_name) {}

void MeanMetricWrapper::update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) {
  Mean::update_state(to_tensor(values(y_true, y_pred)), Tensor(), sample_weight);
}

Json MeanMetricWrapper::get_config() const { return Metric::get_config(); }

}  // namespace detail
}  // namespace kerascpp::metrics
