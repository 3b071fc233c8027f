// The normalisation layers and the keras.applications helper layers: variables in Keras's order and
// shapes, results of small hand-checked cases, and bad configs rejected with a ValueError that names
// the layer and the key. Parity with real Keras is in tests/fixtures (all_layers_normalization,
// applications_helpers, normalization_tf_keras_axes), checked by test_io.
#include <gtest/gtest.h>

#include <cmath>

#include "kerascpp/layer.h"

namespace kerascpp {
namespace {

std::string value_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ValueError";
  return "";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<std::string> names_and_shapes(const Layer& l) {
  std::vector<std::string> out;
  for (const auto& v : l.weights()) out.push_back(v->path().substr(v->path().rfind('/') + 1) + shape_str(v->shape()));
  return out;
}

void set(const LayerPtr& l, const std::vector<std::vector<float>>& values) {
  std::vector<Tensor> ts;
  auto ws = l->weights();
  for (size_t i = 0; i < values.size(); ++i) ts.push_back(Tensor::from_vector(ws[i]->shape(), values[i]));
  l->set_weights(ts);
}

TEST(BatchNormalization, VariablesInKerasOrder) {
  auto bn = make_layer("BatchNormalization", {{"name", "bn"}, {"axis", 1}, {"renorm", true}});
  bn->build({{-1, 3, 4, 5}});
  EXPECT_EQ(names_and_shapes(*bn),
            (std::vector<std::string>{"gamma(3,)", "beta(3,)", "moving_mean(3,)", "moving_variance(3,)",
                                      "moving_stddev(3,)", "renorm_mean(3,)", "renorm_stddev(3,)"}));
  EXPECT_EQ(bn->trainable_weights().size(), 2u);
  auto plain = make_layer("BatchNormalization", {{"name", "bn2"}, {"center", false}, {"synchronized", true}, {"momentum", 0.5}});
  plain->build({{-1, 4}});
  EXPECT_EQ(names_and_shapes(*plain), (std::vector<std::string>{"gamma(4,)", "moving_mean(4,)", "moving_variance(4,)"}));
  auto tfk = make_layer("BatchNormalization", {{"name", "bn3"}, {"axis", {1, 2}}, {"scale", false}});
  tfk->build({{-1, 2, 3, 4}});  // tf_keras: weights of the input's rank
  EXPECT_EQ(names_and_shapes(*tfk), (std::vector<std::string>{"beta(1, 2, 3, 1)", "moving_mean(1, 2, 3, 1)",
                                                              "moving_variance(1, 2, 3, 1)"}));
}

TEST(BatchNormalization, ChannelsFirstUsesMovingStatistics) {
  auto bn = make_layer("BatchNormalization", {{"name", "bn"}, {"axis", 1}, {"epsilon", 0.0}});
  bn->build({{-1, 2, 2}});
  set(bn, {{2.f, 3.f}, {1.f, -1.f}, {10.f, 20.f}, {4.f, 9.f}});  // gamma, beta, mean, variance
  Tensor x = Tensor::from_vector({1, 2, 2}, {10.f, 12.f, 20.f, 23.f});
  Tensor y = bn->call({x}, {})[0];
  // channel 0: (x - 10) / 2 * 2 + 1; channel 1: (x - 20) / 3 * 3 - 1
  std::vector<float> want = {1.f, 3.f, -1.f, 2.f};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y.data<float>()[i], want[i], 1e-6) << i;
}

TEST(LayerNormalization, ShapesFollowKerasSortedAxes) {
  auto ln = make_layer("LayerNormalization", {{"name", "ln"}, {"axis", {-1, 1}}});
  ln->build({{-1, 2, 3, 4}});
  // Keras sorts the configured values: [-1, 1] -> (4, 2), then reads them as (2, 4).
  EXPECT_EQ(names_and_shapes(*ln), (std::vector<std::string>{"gamma(4, 2)", "beta(4, 2)"}));
  auto rms = make_layer("LayerNormalization", {{"name", "rms"}, {"rms_scaling", true}, {"scale", false}});
  rms->build({{-1, 5}});
  EXPECT_EQ(names_and_shapes(*rms), (std::vector<std::string>{"gamma(5,)"}));
}

TEST(LayerNormalization, NormalisesTheLastAxis) {
  auto ln = make_layer("LayerNormalization", {{"name", "ln"}, {"epsilon", 0.0}});
  ln->build({{-1, 2}});
  set(ln, {{1.f, 1.f}, {0.f, 0.f}});  // gamma, beta (variables start zeroed)
  Tensor y = ln->call({Tensor::from_vector({1, 2}, {1.f, 3.f})}, {})[0];
  EXPECT_NEAR(y.data<float>()[0], -1.f, 1e-6);
  EXPECT_NEAR(y.data<float>()[1], 1.f, 1e-6);
}

TEST(GroupNormalization, InstanceNormalisationResolvesGroups) {
  auto gn = make_layer("GroupNormalization", {{"name", "gn"}, {"groups", -1}});
  gn->build({{-1, 3, 6}});
  EXPECT_EQ(gn->get_config()["groups"], 6);
  EXPECT_EQ(names_and_shapes(*gn), (std::vector<std::string>{"gamma(6,)", "beta(6,)"}));
}

TEST(UnitNormalization, SeveralAxes) {
  auto un = make_layer("UnitNormalization", {{"name", "un"}, {"axis", {1, 2}}});
  un->build({{-1, 2, 2}});
  Tensor y = un->call({Tensor::from_vector({1, 2, 2}, {1.f, 1.f, 1.f, 1.f})}, {})[0];
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y.data<float>()[i], 0.5f, 1e-7);
}

TEST(ApplicationLayers, CustomScaleLayerAndLayerScale) {
  auto cs = make_layer("CustomScaleLayer", {{"name", "cs"}, {"scale", 0.5}});
  cs->build({{-1, 2}, {-1, 2}});
  Tensor y = cs->call({Tensor::from_vector({1, 2}, {1.f, 2.f}), Tensor::from_vector({1, 2}, {4.f, 8.f})}, {})[0];
  EXPECT_FLOAT_EQ(y.data<float>()[0], 3.f);
  EXPECT_FLOAT_EQ(y.data<float>()[1], 6.f);
  auto ls = make_layer("LayerScale", {{"name", "ls"}, {"init_values", 1e-6}, {"projection_dim", 2}});
  ls->build({{-1, 2}});
  EXPECT_EQ(names_and_shapes(*ls), (std::vector<std::string>{"variable(2,)"}));
  set(ls, {{2.f, -1.f}});
  Tensor z = ls->call({Tensor::from_vector({1, 2}, {3.f, 4.f})}, {})[0];
  EXPECT_FLOAT_EQ(z.data<float>()[0], 6.f);
  EXPECT_FLOAT_EQ(z.data<float>()[1], -4.f);
  auto sd = make_layer("StochasticDepth", {{"name", "sd"}, {"drop_path_rate", 0.1}});
  sd->build({{-1, 2}});
  EXPECT_EQ(sd->call({z}, {})[0].data<float>(), z.data<float>());
}

TEST(NormalizationErrors, NameTheLayerAndTheKey) {
  std::string e = value_error([] { make_layer("BatchNormalization", {{"name", "bn"}, {"axis", 4}})->build({{-1, 3, 4}}); });
  EXPECT_TRUE(has(e, "'bn'") && has(e, "out of bounds") && has(e, "Received: axis=4")) << e;
  e = value_error([] { make_layer("LayerNormalization", {{"name", "ln"}, {"axis", {1, -5}}})->build({{-1, 3, 4}}); });
  EXPECT_TRUE(has(e, "'ln'") && has(e, "Received: axis=[1,-5]")) << e;
  e = value_error([] { make_layer("GroupNormalization", {{"name", "gn"}, {"groups", 3}})->build({{-1, 8}}); });
  EXPECT_TRUE(has(e, "'gn'") && has(e, "multiple") && has(e, "Received: groups=3")) << e;
  e = value_error([] { make_layer("GroupNormalization", {{"name", "gn"}, {"groups", 16}})->build({{-1, 8}}); });
  EXPECT_TRUE(has(e, "more than the number of channels") && has(e, "Received: groups=16")) << e;
  e = value_error([] { make_layer("GroupNormalization", {{"name", "gn"}, {"groups", 0}}); });
  EXPECT_TRUE(has(e, "'gn'") && has(e, "Received: groups=0")) << e;
  e = value_error([] { make_layer("UnitNormalization", {{"name", "un"}, {"axis", -3}})->build({{-1, 3}}); });
  EXPECT_TRUE(has(e, "'un'") && has(e, "Received: axis=-3")) << e;
  e = value_error([] { make_layer("BatchNormalization", {{"name", "bn"}})->build({{-1, -1}}); });
  EXPECT_TRUE(has(e, "'bn'") && has(e, "undefined `axis` dimension")) << e;
  e = value_error([] { make_layer("CustomScaleLayer", {{"name", "cs"}}); });
  EXPECT_TRUE(has(e, "`scale`") && has(e, "'cs'")) << e;
  e = value_error([] { make_layer("BatchNormalization", {{"name", "bn"}, {"epsilon", "big"}}); });
  EXPECT_TRUE(has(e, "`epsilon`") && has(e, "'bn'")) << e;
  // An axis list holds ints in int's range, or floats holding one: converting a float past it is
  // undefined (found by fuzzing: MultiHeadAttention's attention_axes=[2.9e19]); a wider int would wrap.
  for (const Json& axis : {Json::array({2.9e19}), Json::array({-1, 1.5}), Json(int64_t{1} << 40),
                           Json::array({"1"}), Json(2.0), Json::array({uint64_t{1} << 63})}) {
    e = value_error([&] { make_layer("LayerNormalization", {{"name", "ln"}, {"axis", axis}}); });
    EXPECT_TRUE(has(e, "Invalid value for `axis`") && has(e, "'ln'")) << axis.dump() << ": " << e;
  }
  EXPECT_EQ(make_layer("LayerNormalization", {{"name", "ln"}, {"axis", Json::array({-1.0, 1})}})
                ->get_config()["axis"],
            Json::array({-1.0, 1}));  // a float holding an int is read as Keras reads it
  // Wrong variable shapes: set_weights names the layer (files: src/io/weights_io.cpp does the same).
  auto bn = make_layer("BatchNormalization", {{"name", "bn"}});
  bn->build({{-1, 3}});
  e = value_error([&] { bn->set_weights({Tensor::zeros({4}), Tensor::zeros({3}), Tensor::zeros({3}), Tensor::zeros({3})}); });
  EXPECT_TRUE(has(e, "bn")) << e;
}

}  // namespace
}  // namespace kerascpp
