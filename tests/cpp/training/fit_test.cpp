// fit / evaluate behaviour that needs no Keras reference: bad input gives clear errors and leaves
// the weights intact, NaN losses, saved optimizer state resuming exactly in kerascpp, and a tape
// that does not grow with the number of steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "io/npy/npy.h"
#include "kerascpp/autodiff.h"
#include "kerascpp/model.h"
#include "fixture_json.h"

namespace kerascpp {
namespace {

struct Data {
  Model model;
  std::vector<Tensor> x, y;
};

Data mlp() {
  const std::string dir = testing::fixture("training/mlp_adam/");
  return {load_model(dir + "model.keras"), {io::read_npy(dir + "x.npy")}, {io::read_npy(dir + "y.npy")}};
}

FitOptions quiet(int epochs = 1) {
  FitOptions o;
  o.epochs = epochs, o.verbose = 0, o.shuffle = false, o.batch_size = 10;
  return o;
}

void expect_same(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t k = 0; k < a[i].size(); ++k) ASSERT_EQ(a[i].data<float>()[k], b[i].data<float>()[k]) << i << "," << k;
}

std::string error_of(const std::function<void()>& f) {
  std::string e = testing::error_of<Error>(f);
  return e == "<no error>" ? "" : e;
}

TEST(Fit, BadInputIsAClearErrorAndTheWeightsStayIntact) {
  Data d = mlp();
  const auto before = d.model.get_weights();
  std::vector<Tensor> short_y = {d.y[0].slice(0, 10)};
  EXPECT_NE(error_of([&] { d.model.fit(d.x, short_y, quiet()); }).find("Data cardinality is ambiguous"), std::string::npos);
  EXPECT_NE(error_of([&] { d.model.fit(d.x, {}, quiet()); }).find("target arrays"), std::string::npos);
  {
    // Labels that do not fit the loss: 5 one-hot columns for a 3-class softmax.
    Model cls = load_model(testing::fixture("training/mlp_sgd/model.keras"));
    const auto cls_before = cls.get_weights();
    Tensor wrong_labels = Tensor::zeros({64, 5});
    std::string e = error_of([&] { cls.fit({io::read_npy(testing::fixture("training/mlp_sgd/x.npy"))}, {wrong_labels}, quiet()); });
    EXPECT_NE(e.find("shape"), std::string::npos) << e;
    expect_same(cls.get_weights(), cls_before);
  }
  FitOptions bad = quiet();
  bad.validation_split = 1.5;
  EXPECT_NE(error_of([&] { d.model.fit(d.x, d.y, bad); }).find("validation_split"), std::string::npos);
  EXPECT_NE(error_of([&] { d.model.compile({.optimizer = "adamm", .loss = "mse"}); }).find("adamm"), std::string::npos);
  EXPECT_NE(error_of([&] { d.model.compile({.optimizer = "adam", .loss = "mean_squared_errr"}); }).find("mean_squared_errr"),
            std::string::npos);
  expect_same(d.model.get_weights(), before);
  Model fresh = mlp().model;
  LoadOptions raw;
  raw.compile = false;
  Model uncompiled = load_model(testing::fixture("training/mlp_adam/model.keras"), raw);
  EXPECT_NE(error_of([&] { uncompiled.fit(d.x, d.y, quiet()); }).find("compile()"), std::string::npos);
}

TEST(Fit, NaNLossStopsWithTheWeightsOfTheLastGoodStep) {
  Data d = mlp();
  Tensor y = d.y[0].copy();
  y.data<float>()[25] = std::nanf("");  // in the third batch
  const auto before = d.model.get_weights();
  std::string e = error_of([&] { d.model.fit(d.x, {y}, quiet()); });
  EXPECT_NE(e.find("nan"), std::string::npos) << e;
  EXPECT_NE(e.find("batch 2"), std::string::npos) << e;
  for (const Tensor& w : d.model.get_weights())
    for (int64_t k = 0; k < w.size(); ++k) ASSERT_TRUE(std::isfinite(w.data<float>()[k]));
  // With TerminateOnNaN, fit ends quietly after that batch.
  Data d2 = mlp();
  FitOptions o = quiet(3);
  o.callbacks = {std::make_shared<callbacks::TerminateOnNaN>()};
  auto h = d2.model.fit(d2.x, {y}, o);
  EXPECT_TRUE(d2.model.stop_training);
  for (const Tensor& w : d2.model.get_weights())
    for (int64_t k = 0; k < w.size(); ++k) ASSERT_TRUE(std::isfinite(w.data<float>()[k]));
  (void)before;
}

// Saved after 2 epochs (with the optimizer state) and reloaded, training continues exactly as it
// would have without the save, in every form.
TEST(Fit, SavedOptimizerStateResumesExactly) {
  for (FileForm f : {FileForm::keras, FileForm::h5}) {
    const char* form = file_form_name(f);
    Data a = mlp();
    a.model.fit(a.x, a.y, quiet(2));
    auto bytes = a.model.save_to_memory(f);
    Model b = load_model_from_memory(bytes.data(), bytes.size(), form);
    ASSERT_TRUE(b.compiled()) << form;
    EXPECT_EQ(b.optimizer()->iterations(), a.model.optimizer()->iterations()) << form;
    FitOptions more = quiet(4);
    more.initial_epoch = 2;
    auto ha = a.model.fit(a.x, a.y, more);
    auto hb = b.fit(a.x, a.y, more);
    EXPECT_EQ(ha->history["loss"], hb->history["loss"]) << form;
    expect_same(a.model.get_weights(), b.get_weights());
  }
}

TEST(Fit, TrainOnBatchAndEvaluateForms) {
  Data d = mlp();
  Logs l = d.model.train_on_batch({d.x[0].slice(0, 8)}, {d.y[0].slice(0, 8)});
  EXPECT_TRUE(l.contains("loss") && l.contains("mae"));
  Logs t = d.model.test_on_batch({d.x[0].slice(0, 8)}, {d.y[0].slice(0, 8)});
  EXPECT_LT(t.at("loss"), l.at("loss") * 10);
  EvaluateOptions eo;
  eo.verbose = 0;
  Logs e = d.model.evaluate(d.x, d.y, eo);
  EXPECT_TRUE(e.contains("loss"));
  EXPECT_EQ(d.model.predict_on_batch(d.x)[0].dim(0), d.x[0].dim(0));
}

}  // namespace
}  // namespace kerascpp

namespace kerascpp {
namespace {

// tf-keras's .keras archive keeps its optimizer in optimizer/vars like Keras 3, but without the
// learning-rate entry: iteration, then Adam's m and v per variable.
TEST(Fit, TfKerasArchiveOptimizerStateIsRestored) {
  Model m = load_model(testing::fixture("seed_mlp_2x10/tf_keras/model.keras"));
  ASSERT_TRUE(m.compiled());
  ASSERT_TRUE(m.optimizer()->built());
  EXPECT_EQ(m.optimizer()->iterations(), 1);
  EXPECT_EQ(m.optimizer()->variables()[2]->shape(), (Shape{8, 10}));
}

// compile's metric forms through the C++ API (their numbers against Keras: tests/python/
// test_compile_metrics.py): a dict by output name, one list per output, objects for one output, and
// weighted metrics that see the sample weights where the plain ones do not.
TEST(Fit, MetricsPerOutputAndWeightedMetrics) {
  const std::string dir = testing::fixture("functional_2in_2out/keras3/");
  Model m = load_model(dir + "model.keras");
  const std::vector<Tensor> x = {io::read_npy(dir + "input_0.npy"), io::read_npy(dir + "input_1.npy")};
  const std::vector<Tensor> y = {io::read_npy(dir + "output_0.npy"), Tensor::zeros({4, 1})};
  Tensor w = Tensor::zeros({4});
  for (int i = 0; i < 4; ++i) w.data<float>()[i] = i < 2 ? 1.f : 0.f;  // the first two samples only
  auto mse = metrics::get("mse");
  CompileOptions o;
  o.optimizer = "sgd", o.loss = "mse";
  o.metrics = Json{{"reg_out", Json::array({"mae"})}};
  o.output_metric_objects = {{"class_out", {mse}}};
  o.weighted_metrics = Json::array({Json::array(), Json::array({"mae"})});
  m.compile(o);
  EXPECT_EQ(m.metrics_names(), (std::vector<std::string>{"loss", "mse", "mae", "mae", "class_out_loss", "reg_out_loss"}));
  EvaluateOptions e;
  e.verbose = 0, e.sample_weight = w;
  const Logs logs = m.evaluate(x, y, e);
  std::vector<std::string> keys;
  for (const auto& [k, v] : logs.items()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"class_out_loss", "class_out_mse", "loss", "reg_out_loss", "reg_out_mae",
                                            "reg_out_weighted_mae"}));
  EXPECT_EQ(logs.at("class_out_mse"), mse->result());  // the object given is the one updated
  // The plain mae averages the 4 samples, the weighted one the first two: |y_pred| of each row here.
  const Tensor pred = m({x})[1];
  double all = 0, first_two = 0;
  for (int i = 0; i < 4; ++i) (i < 2 ? first_two : all) += std::fabs(pred.data<float>()[i]);
  all += first_two;
  EXPECT_NEAR(logs.at("reg_out_mae"), all / 4, 1e-6);
  EXPECT_NEAR(logs.at("reg_out_weighted_mae"), first_two / 2, 1e-6);
  // One list per output is saved as Keras 3 saves a dict: by output name.
  EXPECT_EQ(m.compile_config()["weighted_metrics"], (Json{{"reg_out", Json::array({"mae"})}}));
  EXPECT_EQ(m.compile_config()["metrics"]["class_out"][0]["class_name"], "MeanSquaredError");

  o.metrics = Json{{"no_such_output", "mae"}};
  EXPECT_NE(error_of([&] { m.compile(o); }).find("'no_such_output', which is not an output"), std::string::npos);
  o.metrics = Json::array({Json::array({"mae"}), Json::array({"mae"}), Json::array({"mse"})});
  EXPECT_NE(error_of([&] { m.compile(o); }).find("as many entries as the model has outputs"), std::string::npos);
}

}  // namespace
}  // namespace kerascpp
