// Losses against real Keras 3 (tests/fixtures/training/losses_metrics.json), names, configs and errors.
#include <gtest/gtest.h>

#include "../fixture_json.h"
#include "kerascpp/losses.h"

namespace kerascpp {
namespace {

using losses::Json;
using testing::close;
using testing::tensor_from_json;

void expect_tensor(const Tensor& got, const Json& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want["shape"].get<Shape>()) << what;
  const Tensor g = got.dtype() == DType::float32 ? got : got.astype(DType::float32);
  for (int64_t i = 0; i < g.size(); ++i) {
    const double w = want["data"][i].get<double>();
    EXPECT_TRUE(close(g.data<float>()[i], w)) << what << " [" << i << "]: got " << g.data<float>()[i] << ", want " << w;
  }
}

// Every key Keras writes, with Keras's value; kerascpp may add only Huber's delta (see regression_losses.cpp).
void expect_config(const Json& got, const Json& want, const std::string& cls, const std::string& what) {
  for (const auto& [k, v] : want.items()) {
    ASSERT_TRUE(got.contains(k)) << what << ": missing " << k << " in " << got.dump();
    if (v.is_number())
      EXPECT_DOUBLE_EQ(got[k].get<double>(), v.get<double>()) << what << ": " << k;
    else
      EXPECT_EQ(got[k], v) << what << ": " << k;
  }
  for (const auto& [k, v] : got.items())
    EXPECT_TRUE(want.contains(k) || (cls == "Huber" && k == "delta") || (cls == "CosineSimilarity" && k == "axis"))
        << what << ": extra key " << k;
}

TEST(Losses, MatchKeras) {
  const Json& cases = testing::losses_metrics_fixture()["losses"];
  ASSERT_GT(cases.size(), 40u);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Json& c = cases[i];
    const std::string what = "case " + std::to_string(i) + " " + c["id"].dump() + " " + c["note"].get<std::string>();
    losses::LossPtr loss = losses::get(c["id"]);
    EXPECT_EQ(loss->class_name(), c["class_name"].get<std::string>()) << what;
    const Tensor yt = tensor_from_json(c["y_true"]), yp = tensor_from_json(c["y_pred"]);
    const Tensor sw = tensor_from_json(c["sample_weight"]);
    expect_tensor((*loss)(yt, yp, sw), c["expected"], what + " loss");
    expect_tensor(loss->call(yt, yp), c["call"], what + " call");
    expect_config(loss->get_config(), c["config"], loss->class_name(), what);
  }
}

TEST(Losses, ConfigRoundTrip) {
  for (const Json& c : testing::losses_metrics_fixture()["losses"]) {
    losses::LossPtr a = losses::get(c["id"]);
    losses::LossPtr b = losses::get(Json{{"module", "keras.losses"}, {"class_name", a->class_name()},
                                         {"config", a->get_config()}, {"registered_name", nullptr}});
    EXPECT_EQ(b->get_config(), a->get_config());
    EXPECT_EQ(b->name(), a->name());
    EXPECT_EQ(b->reduction(), a->reduction());
  }
  losses::LossPtr h = losses::get(Json{{"class_name", "Huber"}, {"config", {{"delta", 0.25}}}});
  EXPECT_DOUBLE_EQ(losses::get(Json{{"class_name", "Huber"}, {"config", h->get_config()}})->get_config()["delta"], 0.25);
}

TEST(Losses, NamesAndAliases) {
  const std::vector<std::pair<std::string, std::string>> names = {
      {"mse", "MeanSquaredError"}, {"MSE", "MeanSquaredError"}, {"mean_squared_error", "MeanSquaredError"},
      {"mae", "MeanAbsoluteError"}, {"mean_absolute_error", "MeanAbsoluteError"},
      {"mape", "MeanAbsolutePercentageError"}, {"msle", "MeanSquaredLogarithmicError"},
      {"binary_crossentropy", "BinaryCrossentropy"}, {"bce", "BinaryCrossentropy"},
      {"categorical_crossentropy", "CategoricalCrossentropy"},
      {"sparse_categorical_crossentropy", "SparseCategoricalCrossentropy"}, {"kld", "KLDivergence"},
      {"kl_divergence", "KLDivergence"}, {"kullback_leibler_divergence", "KLDivergence"}, {"huber", "Huber"},
      {"log_cosh", "LogCosh"}, {"logcosh", "LogCosh"}, {"poisson", "Poisson"}, {"hinge", "Hinge"},
      {"squared_hinge", "SquaredHinge"}, {"categorical_hinge", "CategoricalHinge"}};
  for (const auto& [id, cls] : names) {
    losses::LossPtr l = losses::get(id);
    EXPECT_EQ(l->class_name(), cls) << id;
    EXPECT_EQ(l->name(), id) << "compile() names a loss function after its identifier";
  }
  for (const std::string& cls : losses::known_losses()) {
    losses::LossPtr l = losses::get(cls);
    EXPECT_EQ(l->class_name(), cls);
    EXPECT_EQ(l->reduction(), losses::Reduction::sum_over_batch_size);
  }
  EXPECT_EQ(losses::get("Huber")->name(), "huber_loss");
  EXPECT_EQ(losses::get("KLDivergence")->name(), "kl_divergence");
  // Keras 3 form of a serialised function.
  EXPECT_EQ(losses::get(Json{{"module", "keras.losses"}, {"class_name", "function"}, {"config", "mse"},
                             {"registered_name", "mse"}})->class_name(),
            "MeanSquaredError");
}

TEST(Losses, Keras2Config) {
  losses::LossPtr l = losses::get(Json{{"class_name", "BinaryCrossentropy"},
                                       {"config", {{"reduction", "auto"}, {"name", "binary_crossentropy"},
                                                   {"from_logits", true}, {"label_smoothing", 0}, {"axis", -1}}}});
  EXPECT_EQ(l->reduction(), losses::Reduction::sum_over_batch_size);
  EXPECT_EQ(l->get_config()["reduction"], "sum_over_batch_size");
  EXPECT_EQ(l->get_config()["from_logits"], true);
  const Tensor y = Tensor::from_vector({2, 1}, {1.f, 0.f});
  const Tensor x = Tensor::from_vector({2, 1}, {0.f, 0.f});
  EXPECT_NEAR((*l)(y, x).data<float>()[0], std::log(2.0), 1e-6);
}

TEST(Losses, Errors) {
  std::string m = testing::error_of<ValueError>([] { losses::get("mean_sqared_error"); });
  EXPECT_NE(m.find("mean_sqared_error"), std::string::npos) << m;
  EXPECT_NE(m.find("MeanSquaredError"), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { losses::get(Json{{"class_name", "Focal"}, {"config", Json::object()}}); });
  EXPECT_NE(m.find("Focal"), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { losses::get(Json{{"class_name", "Huber"}, {"config", {{"delt", 1}}}}); });
  EXPECT_NE(m.find("delt"), std::string::npos) << m;
  m = testing::error_of<ValueError>([] { losses::get(Json{{"class_name", "Hinge"}, {"config", {{"reduction", "avg"}}}}); });
  EXPECT_NE(m.find("reduction=avg"), std::string::npos) << m;
  EXPECT_THROW(losses::get(Json{{"class_name", "SparseCategoricalCrossentropy"}, {"config", {{"ignore_class", "void"}}}}),
               ValueError);

  const Tensor a = Tensor::zeros({4, 3}), b = Tensor::zeros({4, 2});
  for (const char* id : {"mse", "mae", "huber", "log_cosh", "kld", "poisson", "hinge", "categorical_hinge",
                         "binary_crossentropy", "categorical_crossentropy", "dice", "tversky"}) {
    m = testing::error_of<ValueError>([&] { (*losses::get(id))(a, b); });
    EXPECT_NE(m.find("(4, 3)"), std::string::npos) << id << ": " << m;
    EXPECT_NE(m.find("(4, 2)"), std::string::npos) << id << ": " << m;
    EXPECT_NE(m.find(losses::get(id)->class_name()), std::string::npos) << id << ": " << m;
  }
  // The overlap losses' axis: not integers, out of the predictions' rank.
  m = testing::error_of<ValueError>([] { losses::get(Json{{"class_name", "Dice"}, {"config", {{"axis", "all"}}}}); });
  EXPECT_NE(m.find("Dice: `axis` must be None, an integer or a tuple of integers. Received: axis=\"all\""),
            std::string::npos) << m;
  auto tversky = losses::get(Json{{"class_name", "Tversky"}, {"config", {{"axis", Json::array({1, 5})}}}});
  m = testing::error_of<ValueError>([&] { (*tversky)(a, a); });
  EXPECT_NE(m.find("Tversky: axis 5 is out of bounds for the 2-d predictions of shape (4, 3)"), std::string::npos) << m;
  // Sparse labels: wrong shape, out of range.
  auto scce = losses::get("sparse_categorical_crossentropy");
  m = testing::error_of<ValueError>([&] { (*scce)(Tensor::zeros({3}), Tensor::zeros({4, 5})); });
  EXPECT_NE(m.find("SparseCategoricalCrossentropy"), std::string::npos) << m;
  m = testing::error_of<ValueError>([&] { (*scce)(Tensor::from_vector({2}, {1.f, 5.f}), Tensor::zeros({2, 5})); });
  EXPECT_NE(m.find("outside the valid range"), std::string::npos) << m;
  // sample_weight that does not fit.
  m = testing::error_of<ValueError>([&] { (*losses::get("mse"))(a, a, Tensor::zeros({3, 2})); });
  EXPECT_NE(m.find("sample_weight"), std::string::npos) << m;
}

}  // namespace
}  // namespace kerascpp
