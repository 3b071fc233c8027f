// Metrics against real Keras 3 (tests/fixtures/training/losses_metrics.json): results over
// several batches, names (the keys of fit's logs), configs and errors.
#include <regex>

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "../fixture_json.h"
#include "kerascpp/metrics.h"

namespace kerascpp {
namespace {

using metrics::Json;
using testing::close;
using testing::tensor_from_json;

// Keras names a metric built from a config without a name by auto_name ("precision_3": a
// process-wide counter); kerascpp keeps the class's base name.
bool same_name(const std::string& got, const std::string& keras) {
  return got == keras || std::regex_match(keras, std::regex(got + "_[0-9]+"));
}

double run(metrics::Metric& m, const Json& batches) {
  for (const Json& b : batches)
    m.update_state(tensor_from_json(b["y_true"]), tensor_from_json(b["y_pred"]), tensor_from_json(b["sample_weight"]));
  return m.result();
}

TEST(Metrics, MatchKeras) {
  const Json& cases = testing::losses_metrics_fixture()["metrics"];
  ASSERT_GT(cases.size(), 40u);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Json& c = cases[i];
    const std::string what = "case " + std::to_string(i) + " " + c["id"].dump() + " " + c["note"].get<std::string>();
    metrics::MetricPtr m = metrics::get(c["id"], c["y_pred_shape"].get<Shape>(), c["loss"].get<std::string>());
    EXPECT_EQ(m->class_name(), c["class_name"].get<std::string>()) << what;
    EXPECT_TRUE(same_name(m->name(), c["name"].get<std::string>())) << what << ": " << m->name();
    const double want = c["result"].get<double>();
    const double got = run(*m, c["batches"]);
    EXPECT_TRUE(close(got, want)) << what << ": got " << got << ", want " << want;
    m->reset_state();
    if (c["class_name"] == "R2Score")
      EXPECT_TRUE(std::isnan(m->result())) << what;  // 0 / 0 counts: NaN in Keras too
    else
      EXPECT_EQ(m->result(), 0.0) << what;
    EXPECT_TRUE(close(run(*m, c["batches"]), want)) << what << " after reset_state";
    const Json config = m->get_config();
    for (const auto& [k, v] : c["config"].items()) {
      if (k == "name") continue;
      ASSERT_TRUE(config.contains(k)) << what << ": missing " << k << " in " << config.dump();
      if (v.is_number())
        EXPECT_DOUBLE_EQ(config[k].get<double>(), v.get<double>()) << what << ": " << k;
      else
        EXPECT_EQ(config[k], v) << what << ": " << k;
    }
  }
}

TEST(Metrics, ConfigRoundTrip) {
  for (const Json& c : testing::losses_metrics_fixture()["metrics"]) {
    metrics::MetricPtr a = metrics::get(c["id"], c["y_pred_shape"].get<Shape>(), c["loss"].get<std::string>());
    metrics::MetricPtr b = metrics::get(Json{{"module", "keras.metrics"}, {"class_name", a->class_name()},
                                             {"config", a->get_config()}, {"registered_name", nullptr}});
    EXPECT_EQ(b->get_config(), a->get_config());
    EXPECT_EQ(b->name(), a->name());
    EXPECT_TRUE(close(run(*b, c["batches"]), c["result"].get<double>())) << c["id"].dump();
  }
}

// compile(metrics=[...]) with these strings: Keras's fit logs each under the string itself.
TEST(Metrics, LogNamesAreTheIdentifiers) {
  const Json& ln = testing::losses_metrics_fixture()["log_names"];
  const std::vector<std::string> keys = ln["history_keys"].get<std::vector<std::string>>();
  for (const Json& id : ln["identifiers"]) {
    metrics::MetricPtr m = metrics::get(id, {-1, 1}, "binary_crossentropy");
    EXPECT_EQ(m->name(), id.get<std::string>());
    EXPECT_NE(std::find(keys.begin(), keys.end(), m->name()), keys.end()) << m->name();
    EXPECT_NE(std::find(keys.begin(), keys.end(), "val_" + m->name()), keys.end()) << m->name();
  }
}

TEST(Metrics, AccuracyResolution) {
  EXPECT_EQ(metrics::get("accuracy", {-1, 1}, "binary_crossentropy")->class_name(), "BinaryAccuracy");
  EXPECT_EQ(metrics::get("acc", {-1, 1}, "mse")->class_name(), "BinaryAccuracy");
  EXPECT_EQ(metrics::get("accuracy", {-1, 10}, "sparse_categorical_crossentropy")->class_name(),
            "SparseCategoricalAccuracy");
  EXPECT_EQ(metrics::get("Accuracy", {-1, 10}, "SparseCategoricalCrossentropy")->name(), "Accuracy");
  EXPECT_EQ(metrics::get("accuracy", {-1, 10}, "categorical_crossentropy")->class_name(), "CategoricalAccuracy");
  // Keras 3 decides from the shapes, not the loss: a multi-label BCE output gets CategoricalAccuracy.
  EXPECT_EQ(metrics::get("accuracy", {-1, 5}, "binary_crossentropy")->class_name(), "CategoricalAccuracy");
  EXPECT_EQ(metrics::get(Json{{"class_name", "Accuracy"}, {"config", Json::object()}})->class_name(), "Accuracy");
  // The string "Accuracy" is resolved like "accuracy" (compile_utils lower-cases it).
  EXPECT_EQ(metrics::get("Accuracy", {-1, 10})->class_name(), "CategoricalAccuracy");
  // Every class by its name, but those with a required argument (Keras's own get() fails on them too).
  const std::set<std::string> required = {"Accuracy", "MeanMetricWrapper", "IoU", "MeanIoU", "OneHotIoU", "OneHotMeanIoU",
                                          "SensitivityAtSpecificity", "SpecificityAtSensitivity", "PrecisionAtRecall",
                                          "RecallAtPrecision", "F1Score", "FBetaScore"};
  for (const std::string& cls : metrics::known_metrics())
    if (!required.count(cls)) EXPECT_EQ(metrics::get(cls)->class_name(), cls);
}

TEST(Metrics, Mean) {
  metrics::Mean m("loss");
  m.update_state(Tensor::from_vector({4}, {1, 2, 3, 4}), Tensor(), Tensor::from_vector({4}, {1, 1, 0, 0}));
  EXPECT_DOUBLE_EQ(m.result(), 1.5);
  m.add(9.0, 2.0);
  EXPECT_DOUBLE_EQ(m.result(), (3.0 + 18.0) / 4.0);
  m.reset_state();
  EXPECT_EQ(m.result(), 0.0);
  EXPECT_EQ(m.get_config(), (Json{{"name", "loss"}, {"dtype", "float32"}}));
}

TEST(Metrics, Errors) {
  std::string m = testing::error_of<ValueError>([] { metrics::get("acuracy"); });
  EXPECT_NE(m.find("acuracy"), std::string::npos) << m;
  EXPECT_NE(m.find("binary_accuracy"), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { metrics::get(Json{{"class_name", "FBetaScore"}, {"config", {{"average", "macro"}, {"beta", 0}}}}); });
  EXPECT_NE(m.find("It should be > 0. Received: beta=0"), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { metrics::get(Json{{"class_name", "F1Score"}, {"config", {{"average", "mean"}}}}); });
  EXPECT_NE(m.find("Invalid `average` argument value"), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { metrics::get(Json{{"class_name", "IoU"}, {"config", {{"num_classes", 3}, {"target_class_ids", {0, 3}}}}}); });
  EXPECT_NE(m.find("IoU: Target class id 3 is out of range, which is [0, 3)."), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { metrics::get(Json{{"class_name", "MeanIoU"}, {"config", Json::object()}}); });
  EXPECT_NE(m.find("MeanIoU: `num_classes` must be a positive integer"), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { metrics::get(Json{{"class_name", "PrecisionAtRecall"}, {"config", {{"recall", 1.5}}}}); });
  EXPECT_NE(m.find("Argument `recall` must be in the range [0, 1]. Received: recall=1.5"), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { metrics::get(Json{{"class_name", "MeanMetricWrapper"}, {"config", {{"fn", "no_such_fn"}}}}); });
  EXPECT_NE(m.find("MeanMetricWrapper(fn=no_such_fn)"), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { metrics::get(Json{{"class_name", "MeanMetricWrapper"}, {"config", {{"fn", "auc"}}}}); });
  EXPECT_NE(m.find("is not a function Keras averages per sample"), std::string::npos) << m;
  metrics::MetricPtr f1 = metrics::get(Json{{"class_name", "F1Score"}, {"config", {{"average", "macro"}}}});
  m = testing::error_of<ValueError>([&] { f1->update_state(Tensor::zeros({4}), Tensor::zeros({4})); });
  EXPECT_NE(m.find("F1Score expects 2D inputs"), std::string::npos) << m;
  // The new metrics' bad options: a clear error naming the option; a vector-valued form refused by name.
  m = testing::error_of<ValueError>([] { metrics::get(Json{{"class_name", "R2Score"}, {"config", {{"class_aggregation", "max"}}}}); });
  EXPECT_NE(m.find("class_aggregation=\"max\""), std::string::npos) << m;
  m = testing::error_of<NotImplementedError>([] { metrics::get(Json{{"class_name", "R2Score"}, {"config", {{"class_aggregation", nullptr}}}}); });
  EXPECT_NE(m.find("class_aggregation=None"), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { metrics::get(Json{{"class_name", "R2Score"}, {"config", {{"num_regressors", -1}}}}); });
  EXPECT_NE(m.find("num_regressors"), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { metrics::get(Json{{"class_name", "TruePositives"}, {"config", {{"thresholds", 1.5}}}}); });
  EXPECT_NE(m.find("[0, 1]"), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { metrics::get(Json{{"class_name", "BinaryAccuracy"}, {"config", {{"treshold", 1}}}}); });
  EXPECT_NE(m.find("treshold"), std::string::npos) << m;
  EXPECT_THROW(metrics::get(Json{{"class_name", "Recall"}, {"config", {{"thresholds", 1.5}}}}), ValueError);
  EXPECT_THROW(metrics::get(Json{{"class_name", "AUC"}, {"config", {{"curve", "XY"}}}}), ValueError);
  EXPECT_THROW(metrics::get(Json{{"class_name", "AUC"}, {"config", {{"num_labels", 3}}}}), ValueError);
  EXPECT_THROW(metrics::get(Json{{"class_name", "AUC"}, {"config", {{"label_weights", {1, -1}}}}}), ValueError);
  EXPECT_THROW(metrics::get(Json{{"class_name", "Precision"}, {"config", {{"thresholds", Json::array()}}}}), ValueError);
  metrics::MetricPtr acc = metrics::get("binary_accuracy");
  m = testing::error_of<ValueError>([&] { acc->update_state(Tensor::zeros({4, 3}), Tensor::zeros({4, 2})); });
  EXPECT_NE(m.find("(4, 3)"), std::string::npos) << m;
  metrics::MetricPtr mse = metrics::get("mse");
  m = testing::error_of<ValueError>([&] { mse->update_state(Tensor::zeros({4, 3}), Tensor::zeros({4, 2})); });
  EXPECT_NE(m.find("MeanSquaredError"), std::string::npos) << m;
}

// Several thresholds, or one score per class: an array from result_array(), result() refused by name.
// (Values against real Keras in tests/python/test_array_metrics.py.)
TEST(Metrics, ArrayResults) {
  Tensor y_true = Tensor::from_vector({3, 1}, {1, 0, 1}), y_pred = Tensor::from_vector({3, 1}, {0.4f, 0.7f, 0.9f});
  metrics::MetricPtr p = metrics::get(Json{{"class_name", "Precision"}, {"config", {{"thresholds", {0.3, 0.6}}}}});
  p->update_state(y_true, y_pred);
  EXPECT_TRUE(p->array_result());
  std::vector<double> r = p->result_array();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_NEAR(r[0], 2.0 / 3.0, 1e-7);
  EXPECT_NEAR(r[1], 0.5, 1e-7);
  std::string m = testing::error_of<ValueError>([&] { p->result(); });
  EXPECT_NE(m.find("Precision 'precision' reports an array of 2 values"), std::string::npos) << m;
  metrics::MetricPtr one = metrics::get(Json{{"class_name", "TruePositives"}, {"config", {{"thresholds", {0.5}}}}});
  one->update_state(y_true, y_pred);
  EXPECT_FALSE(one->array_result());  // one threshold in a list: a number, as Keras's result()[0]
  EXPECT_EQ(one->result(), 1.0);
  metrics::MetricPtr f1 = metrics::get(Json{{"class_name", "F1Score"}, {"config", Json::object()}});
  EXPECT_TRUE(f1->array_result());
  f1->update_state(Tensor::from_vector({2, 2}, {1, 0, 0, 1}), Tensor::from_vector({2, 2}, {0.9f, 0.1f, 0.8f, 0.2f}));
  r = f1->result_array();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_NEAR(r[0], 2.0 / 3.0, 1e-6);  // class 0: P 1/2, R 1
  EXPECT_NEAR(r[1], 0.0, 1e-6);
}

}  // namespace
}  // namespace kerascpp
