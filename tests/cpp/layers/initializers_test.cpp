// keras.initializers (layers/initializers.h): the fans, the deterministic ones exactly, seeds, the
// orthogonal ones' orthogonality and the errors. Distributions against real Keras's: tests/python/
// test_initializers.py.
#include "layers/initializers.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../test_errors.h"
#include "kerascpp/model.h"

namespace kerascpp::layers {
namespace {

using testing::error_of;

Tensor filled(const Json& init, const Shape& shape, uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  Tensor t = Tensor::empty(shape);
  Initializer::from_config(init, "layer 't' (Test)").fill(t, rng);
  return t;
}

TEST(Initializers, FansAsKerasComputesThem) {
  EXPECT_EQ(compute_fans({}), std::make_pair(1.0, 1.0));
  EXPECT_EQ(compute_fans({7}), std::make_pair(7.0, 7.0));
  EXPECT_EQ(compute_fans({3, 5}), std::make_pair(3.0, 5.0));
  EXPECT_EQ(compute_fans({3, 3, 8, 16}), std::make_pair(72.0, 144.0));  // receptive field 9
  EXPECT_EQ(compute_fans({4, 2, 6}, {0}, {1, 2}), std::make_pair(4.0, 12.0));  // EinsumDense's axes
}

TEST(Initializers, ConstantsIdentityAndTheirNames) {
  for (const Json& ones : {Json("ones"), Json("Ones"), Json("one"), Json{{"class_name", "Ones"}, {"config", Json::object()}}}) {
    const Tensor t = filled(ones, {2, 3});
    for (int64_t i = 0; i < t.size(); ++i) EXPECT_EQ(t.data<float>()[i], 1.f) << ones.dump();
  }
  const Tensor c = filled({{"class_name", "Constant"}, {"config", {{"value", -2.5}}}}, {4});
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(c.data<float>()[i], -2.5f);
  const Tensor id = filled({{"class_name", "Identity"}, {"config", {{"gain", 3.0}}}}, {2, 3});
  EXPECT_EQ(std::vector<float>(id.data<float>(), id.data<float>() + 6), (std::vector<float>{3, 0, 0, 0, 3, 0}));
}

TEST(Initializers, ASeedGivesTheSameValuesEveryTimeAndNoSeedTheCallersStream) {
  const Json seeded = {{"class_name", "GlorotUniform"}, {"config", {{"seed", 42}}}};
  const Tensor a = filled(seeded, {5, 7}, 1), b = filled(seeded, {5, 7}, 2);
  const Tensor c = filled("glorot_uniform", {5, 7}, 1), d = filled("glorot_uniform", {5, 7}, 2);
  bool ab_same = true, cd_same = true;
  const float limit = std::sqrt(6.f / 12.f);
  for (int64_t i = 0; i < a.size(); ++i) {
    ab_same = ab_same && a.data<float>()[i] == b.data<float>()[i];
    cd_same = cd_same && c.data<float>()[i] == d.data<float>()[i];
    EXPECT_LE(std::fabs(c.data<float>()[i]), limit);  // sqrt(6 / (fan_in + fan_out))
  }
  EXPECT_TRUE(ab_same);
  EXPECT_FALSE(cd_same);
}

TEST(Initializers, OrthogonalGivesOrthonormalRowsOrColumnsTimesTheGain) {
  for (const Shape& s : {Shape{6, 4}, Shape{3, 8}, Shape{2, 3, 4}}) {
    const Tensor q = filled({{"class_name", "Orthogonal"}, {"config", {{"gain", 2.0}}}}, s);
    const int64_t cols = s.back(), rows = q.size() / cols;
    const bool by_columns = rows >= cols;  // the (rows, cols) flattening's narrow side is orthonormal
    const int64_t k = by_columns ? cols : rows, len = by_columns ? rows : cols;
    auto at = [&](int64_t vec, int64_t i) { return by_columns ? q.data<float>()[i * cols + vec] : q.data<float>()[vec * cols + i]; };
    for (int64_t u = 0; u < k; ++u)
      for (int64_t v = 0; v < k; ++v) {
        double dot = 0;
        for (int64_t i = 0; i < len; ++i) dot += double(at(u, i)) * at(v, i);
        EXPECT_NEAR(dot, u == v ? 4.0 : 0.0, 1e-5) << shape_str(s);
      }
  }
}

TEST(Initializers, ErrorsNameTheLayerAndTheValue) {
  EXPECT_NE(error_of([] { filled("glorot_unifrom", {2}); }).find("Could not interpret initializer identifier: \"glorot_unifrom\" "
                                                                 "(layer 't' (Test))"),
            std::string::npos);
  EXPECT_NE(error_of([] { filled({{"class_name", "VarianceScaling"}, {"config", {{"mode", "fan_sum"}}}}, {2}); })
                .find("Invalid `mode` argument of the VarianceScaling initializer of layer 't' (Test)"),
            std::string::npos);
  EXPECT_NE(error_of([] { filled("identity", {2, 2, 2}); }).find("Identity matrix initializer can only be used for 2D matrices"),
            std::string::npos);
  EXPECT_NE(error_of([] { filled("orthogonal", {4}); }).find("at least two-dimensional"), std::string::npos);
}

TEST(Initializers, AModelFromAConfigStartsFromKerassInitializersNeverZeros) {
  const Json c = {{"class_name", "Sequential"},
                  {"config",
                   {{"name", "s"},
                    {"layers",
                     {{{"class_name", "InputLayer"}, {"config", {{"name", "in"}, {"batch_shape", {nullptr, 4}}}}},
                      {{"class_name", "Dense"}, {"config", {{"name", "d"}, {"units", 3}}}},
                      {{"class_name", "BatchNormalization"}, {"config", {{"name", "bn"}}}}}}}}};
  const Model m = model_from_json(c.dump());
  const std::vector<Tensor> w = m.get_weights();  // kernel, bias, gamma, beta, moving mean, moving variance
  ASSERT_EQ(w.size(), 6u);
  double kernel = 0;
  for (int64_t i = 0; i < w[0].size(); ++i) kernel += std::fabs(w[0].data<float>()[i]);
  EXPECT_GT(kernel, 0.0);
  const float want[] = {0, 1, 0, 0, 1};  // bias zeros, gamma ones, beta zeros, mean zeros, variance ones
  for (size_t k = 1; k < 6; ++k)
    for (int64_t i = 0; i < w[k].size(); ++i) EXPECT_EQ(w[k].data<float>()[i], want[k - 1]) << k;
}

TEST(Initializers, LayersWhoseKerasKeysOrDefaultsDiffer) {
  auto model = [](const Json& layer, const Json& batch_shape) {
    return model_from_json(Json{{"class_name", "Sequential"},
                                {"config",
                                 {{"name", "s"},
                                  {"layers",
                                   {{{"class_name", "InputLayer"}, {"config", {{"name", "in"}, {"batch_shape", batch_shape}}}},
                                    layer}}}}}
                               .dump());
  };
  // DepthwiseConv2D's "kernel" takes depthwise_initializer (Keras's key).
  const Model dw = model({{"class_name", "DepthwiseConv2D"},
                          {"config", {{"name", "dw"}, {"kernel_size", 2},
                                      {"depthwise_initializer", {{"class_name", "Constant"}, {"config", {{"value", 0.5}}}}}}}},
                         {nullptr, 3, 3, 2});
  const Tensor k = dw.get_weights()[0];
  for (int64_t i = 0; i < k.size(); ++i) EXPECT_EQ(k.data<float>()[i], 0.5f);
  // Normalization before adapt(): mean 0, variance 1 (so it passes values through), as Keras builds it.
  const Model norm = model({{"class_name", "Normalization"}, {"config", {{"name", "n"}, {"axis", -1}}}}, {nullptr, 3});
  const Tensor y = norm.predict({Tensor::from_vector({1, 3}, {1, -2, 3})})[0];
  EXPECT_NEAR(y.data<float>()[0], 1.f, 1e-3);
  EXPECT_NEAR(y.data<float>()[1], -2.f, 1e-3);
}

}  // namespace
}  // namespace kerascpp::layers
