// metrics::get: compile(metrics=[...]) identifiers (keras/src/metrics/__init__.py
// ALL_OBJECTS_DICT and keras/src/trainers/compile_utils.py get_metric), and the one list of the
// metric classes kerascpp knows.
#include <algorithm>
#include <cctype>

#include "core/naming.h"
#include "training/metrics/metric_utils.h"

namespace kerascpp::metrics {
namespace {

struct Entry {
  const char* class_name;
  const char* arguments;
  std::vector<std::string> identifiers;  // to_snake_case(class_name) first, then Keras's aliases
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> t = {
#define KCPP_METRIC(cls, args, identifiers) {#cls, args, split_words(identifiers)},
#include "training/metrics/metric_list.inc"
#undef KCPP_METRIC
  };
  return t;
}

std::string known_list() {
  std::string s = "accuracy, acc";
  for (const Entry& e : table()) {
    s += std::string(", ") + e.class_name;
    for (const std::string& id : e.identifiers) s += ", " + id;
  }
  return s;
}

MetricPtr make(const std::string& cls, const Json& config) {
  if (cls == "Mean") {
    detail::check_keys(config, "Mean", {});
    return std::make_shared<Mean>(detail::name_in(config, "mean"));
  }
  if (MetricPtr m = detail::make_accuracy_metric(cls, config)) return m;
  if (MetricPtr m = detail::make_regression_metric(cls, config)) return m;
  if (MetricPtr m = detail::make_iou_metric(cls, config)) return m;
  if (MetricPtr m = detail::make_f_score_metric(cls, config)) return m;
  if (MetricPtr m = detail::make_reduction_metric(cls, config)) return m;
  return detail::make_confusion_metric(cls, config);
}

// The class a string names, or "".
std::string class_for(const std::string& id) {
  for (const Entry& e : table()) {
    if (id == e.class_name) return e.class_name;
    for (const std::string& alias : e.identifiers)
      if (id == alias) return e.class_name;
  }
  return "";
}

}  // namespace

MetricPtr get(const Json& identifier, const Shape& y_pred_shape, const std::string& loss_name) {
  if (identifier.is_string()) {
    const std::string id = identifier.get<std::string>();
    std::string lower = id;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    std::string cls;
    if (lower == "accuracy" || lower == "acc") {
      // compile_utils.is_binary_or_sparse_categorical decides from y_true and y_pred: binary when
      // y_pred's last dim is 1; sparse when y_true has a lower rank (or a last dim of 1 against
      // classes). kerascpp sees no y_true here: a sparse categorical crossentropy loss stands for it;
      // under a loss written in Python the metric reads it from the labels it is given.
      const bool binary = !y_pred_shape.empty() && y_pred_shape.back() == 1;
      const bool sparse = loss_name == "sparse_categorical_crossentropy" || loss_name == "SparseCategoricalCrossentropy";
      const bool python_loss = loss_name == "LossFunctionWrapper";
      cls = binary ? "BinaryAccuracy" : sparse ? "SparseCategoricalAccuracy" : python_loss ? "AccuracyByLabels"
                                                                                       : "CategoricalAccuracy";
    } else {
      cls = class_for(id);
    }
    KCPP_CHECK(!cls.empty(), ValueError, "Could not interpret metric identifier: ", id, ". Known metrics: ",
               known_list());
    // compile() names a metric given by string after the string ("mae" logs as "mae").
    return make(cls, Json{{"name", id}});
  }
  KCPP_CHECK(identifier.is_object() && identifier.contains("class_name") && identifier["class_name"].is_string(),
             ValueError, "Could not interpret metric identifier: ", identifier.dump(),
             ". Expected a name or a dict with 'class_name' and 'config'.");
  const std::string cls = identifier["class_name"].get<std::string>();
  const Json config = identifier.contains("config") ? identifier["config"] : Json::object();
  if (cls == "function" && config.is_string()) return get(config, y_pred_shape, loss_name);
  for (const Entry& e : table())
    if (cls == e.class_name) return make(cls, config.is_null() ? Json::object() : config);
  KCPP_THROW(ValueError, "Could not interpret metric identifier: ", identifier.dump(), ". Unknown class_name '", cls,
             "'. Known metrics: ", known_list());
}

std::vector<std::string> known_metrics() {
  std::vector<std::string> names;
  for (const Entry& e : table()) names.emplace_back(e.class_name);
  return names;
}

std::vector<ClassInfo> metric_classes() {
  std::vector<ClassInfo> out;
  for (const Entry& e : table()) out.push_back({e.class_name, split_words(e.arguments), e.identifiers});
  return out;
}

}  // namespace kerascpp::metrics
