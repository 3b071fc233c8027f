// A call fixed with training= runs in that mode whatever the caller's, as in Keras (an explicit
// argument wins): Monte Carlo dropout at inference, and a base model kept in inference mode while the
// model around it trains (transfer learning's base_model(x, training=False)).
#include <gtest/gtest.h>

#include "../test_errors.h"
#include "kerascpp/kerascpp.h"

namespace kerascpp {
namespace {
using layers::Input;
using testing::error_of;

Tensor filled(const Shape& shape, float v) { return Tensor::from_vector(shape, std::vector<float>(shape_size(shape), v)); }

TEST(TrainingArgument, DropoutFixedToTrainingDropsAtInferenceAfreshEachCall) {
  auto x = Input({64});
  Model m({x}, {layers::Dropout({{"rate", 0.5}})(x, {{"training", true}}), layers::Dropout({{"rate", 0.5}})(x)});
  const Tensor ones = filled({4, 64}, 1.f);
  const std::vector<Tensor> a = m.predict({ones}), b = m.predict({ones});
  int zeros = 0, differ = 0;
  for (int64_t i = 0; i < a[0].size(); ++i) {
    const float v = a[0].data<float>()[i];
    EXPECT_TRUE(v == 0.f || v == 2.f) << v;  // kept values scaled by 1 / (1 - rate)
    zeros += v == 0.f;
    differ += v != b[0].data<float>()[i];
    EXPECT_EQ(a[1].data<float>()[i], 1.f);  // the other Dropout follows the caller: inference
  }
  EXPECT_NEAR(zeros, 128, 40);  // binomial(256, 1/2): sd 8
  EXPECT_GT(differ, 50);        // another call, other draws
  // The argument is part of the saved call.
  const std::vector<char> bytes = m.save_to_memory(FileForm::keras);
  Model again = load_model_from_memory(bytes.data(), bytes.size());
  int again_zeros = 0;
  const Tensor c = again.predict({ones})[0];
  for (int64_t i = 0; i < c.size(); ++i) again_zeros += c.data<float>()[i] == 0.f;
  EXPECT_GT(again_zeros, 60);
}

TEST(TrainingArgument, ABaseCalledWithTrainingFalseKeepsItsStatisticsWhileTheModelTrains) {
  auto make = [](bool fixed) {
    auto x = Input({3});
    Model base({x}, {layers::BatchNormalization({{"name", "bn"}})(x)}, "base");
    auto z = Input({3});
    auto h = fixed ? base.as_layer()(z, {{"training", false}}) : base.as_layer()(z);
    Model m({z}, {layers::Dense({{"units", 1}, {"name", "head"}})(h)});
    m.compile({.optimizer = "sgd", .loss = "mse"});
    Tensor xs = Tensor::empty({8, 3});
    for (int64_t i = 0; i < xs.size(); ++i) xs.data<float>()[i] = static_cast<float>(i % 7) - 2.f;
    m.train_on_batch({xs}, {filled({8, 1}, 1.f)});
    return m.get_layer("base").get_weights()[2];  // moving_mean
  };
  const Tensor kept = make(true), moved = make(false);
  for (int64_t i = 0; i < kept.size(); ++i) EXPECT_EQ(kept.data<float>()[i], 0.f);
  float change = 0;
  for (int64_t i = 0; i < moved.size(); ++i) change += std::fabs(moved.data<float>()[i]);
  EXPECT_GT(change, 0.f);
  auto x = Input({3});
  EXPECT_NE(error_of([&] { layers::Dropout({{"rate", 0.5}})(x, {{"training", "yes"}}); }).find("training=\"yes\""),
            std::string::npos);
}

}  // namespace
}  // namespace kerascpp
