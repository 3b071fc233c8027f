// Models built in code (kerascpp/keras_tensor.h, kerascpp/layers.h): the graph calls record, the
// config a model built from it has (Keras's layer order and node indices), shared layers, sub-models of
// a loaded model, Sequential, freezing, and the errors. That Keras reads such models back and predicts
// the same is checked from Python against live Keras (tests/python/test_build_models.py).
#include <gtest/gtest.h>

#include <cmath>

#include "kerascpp/kerascpp.h"
#include "../test_errors.h"

namespace kerascpp {
namespace {

using layers::Input;
using testing::error_of;

Tensor ramp(Shape shape) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  return t;
}

float max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  float m = 0;
  for (int64_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a.data<float>()[i] - b.data<float>()[i]));
  return m;
}

TEST(BuildModels, FunctionalMlpStartsFromItsInitializers) {
  auto x = Input({8}, {{"name", "x"}});
  auto h = layers::Dense({{"units", 16}, {"activation", "relu"}, {"name", "hidden"}})(x);
  auto y = layers::Dense({{"units", 3}, {"name", "out"}})(h);
  EXPECT_EQ(h.shape(), (Shape{-1, 16}));
  Model m({x}, {y}, "mlp");
  EXPECT_EQ(m.name(), "mlp");
  ASSERT_EQ(m.layers().size(), 3u);  // the InputLayer too, as Keras's functional models list it
  EXPECT_EQ(m.layers()[1]->name(), "hidden");
  EXPECT_EQ(m.count_params(), 8 * 16 + 16 + 16 * 3 + 3);
  // GlorotUniform: within sqrt(6 / (fan_in + fan_out)), not all zeros; biases zero.
  const Tensor kernel = m.get_weights()[0];
  const float limit = std::sqrt(6.0f / (8 + 16));
  float largest = 0;
  for (int64_t i = 0; i < kernel.size(); ++i) largest = std::max(largest, std::fabs(kernel.data<float>()[i]));
  EXPECT_GT(largest, limit / 4);
  EXPECT_LE(largest, limit);
  for (int64_t i = 0; i < 16; ++i) EXPECT_EQ(m.get_weights()[1].data<float>()[i], 0.0f);
  EXPECT_EQ(m.predict({ramp({5, 8})})[0].shape(), (Shape{5, 3}));
  const Json c = m.get_config()["config"];
  EXPECT_EQ(c["input_layers"], Json::parse(R"([["x", 0, 0]])"));
  EXPECT_EQ(c["output_layers"], Json::parse(R"([["out", 0, 0]])"));
  EXPECT_EQ(c["layers"][2]["inbound_nodes"][0]["args"][0]["config"]["keras_history"], Json::parse(R"(["hidden", 0, 0])"));
}

TEST(BuildModels, ASharedLayerIsOneSetOfWeightsWithTwoNodes) {
  auto a = Input({4}, {{"name", "a"}});
  auto b = Input({4}, {{"name", "b"}});
  LayerRef shared = layers::Dense({{"units", 2}, {"name", "shared"}});
  auto sum = layers::Add({{"name", "sum"}})({shared(a), shared(b)});
  Model m({a, b}, {sum});
  EXPECT_EQ(m.weights().size(), 2u);
  const Json c = m.get_config()["config"];
  Json shared_entry;
  for (const Json& e : c["layers"])
    if (e["name"] == "shared") shared_entry = e;
  ASSERT_EQ(shared_entry["inbound_nodes"].size(), 2u);
  const Json& add_args = c["layers"].back()["inbound_nodes"][0]["args"][0];
  EXPECT_EQ(add_args[1]["config"]["keras_history"], Json::parse(R"(["shared", 1, 0])"));
  // shared(a) + shared(b) is shared(a + b) less one bias.
  const Tensor xa = ramp({3, 4}), xb = ramp({3, 4});
  const Tensor y = m.predict({xa, xb})[0];
  Model single({a}, {shared(a)});
  const Tensor ya = single.predict({xa})[0];
  for (int64_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y.data<float>()[i], 2 * ya.data<float>()[i], 1e-5);
}

// keras/src/ops/function.py map_graph: deepest layers first, ties in the order a walk from the
// outputs first meets them (the output layer first). Keras 3.15 orders this graph so.
TEST(BuildModels, LayersAreInKerasOrder) {
  auto x = Input({4}, {{"name", "x"}});
  auto left = layers::Dense({{"units", 3}, {"name", "left"}})(x);
  auto right = layers::Dense({{"units", 3}, {"name", "right"}})(layers::Dense({{"units", 3}, {"name", "pre"}})(x));
  auto y = layers::Concatenate({{"name", "cat"}})({left, right});
  Model m({x}, {y});
  std::vector<std::string> names;
  for (Layer* l : m.layers()) names.push_back(l->name());
  EXPECT_EQ(names, (std::vector<std::string>{"x", "pre", "left", "right", "cat"}));
}

TEST(BuildModels, ASubModelOfALoadedModelSharesItsLayers) {
  auto x = Input({6}, {{"name", "x"}});
  auto f = layers::Dense({{"units", 5}, {"activation", "tanh"}, {"name", "features"}})(x);
  auto y = layers::Dense({{"units", 2}, {"name", "head"}})(f);
  const std::vector<char> bytes = Model({x}, {y}, "base").save_to_memory(FileForm::keras);
  Model base = load_model_from_memory(bytes.data(), bytes.size());
  Model extractor(base.inputs(), base.layer_outputs("features"), "extractor");
  EXPECT_EQ(extractor.layers().size(), 2u);
  EXPECT_EQ(extractor.weights()[0].get(), base.weights()[0].get());  // the same variable
  // A new head on the extracted features, with the base frozen.
  base.get_layer("features").set_trainable(false);
  auto head = layers::Dense({{"units", 1}, {"name", "new_head"}})(base.layer_outputs("features")[0]);
  Model transfer(base.inputs(), {head});
  EXPECT_EQ(transfer.trainable_weights().size(), 2u);
  EXPECT_EQ(transfer.non_trainable_weights().size(), 2u);
  EXPECT_EQ(transfer.get_config()["config"]["layers"][1]["config"]["trainable"], false);
  const Tensor in = ramp({4, 6});
  const Tensor feats = extractor.predict({in})[0];
  const Tensor direct = transfer.get_layer("new_head").call({feats}, {})[0];
  EXPECT_LT(max_abs_diff(transfer.predict({in})[0], direct), 1e-6);
}

TEST(BuildModels, ANestedModelIsALayer) {
  auto x = Input({3}, {{"name", "inner_x"}});
  Model inner({x}, {layers::Dense({{"units", 2}, {"name", "inner_dense"}})(x)}, "inner");
  auto z = Input({3}, {{"name", "z"}});
  auto out = layers::Dense({{"units", 1}, {"name", "top"}})(inner.as_layer()(z));
  Model outer({z}, {out}, "outer");
  EXPECT_EQ(outer.layers()[1]->name(), "inner");
  EXPECT_EQ(outer.weights().size(), 4u);
  const std::vector<char> bytes = outer.save_to_memory(FileForm::keras);
  Model back = load_model_from_memory(bytes.data(), bytes.size());
  const Tensor in = ramp({2, 3});
  EXPECT_LT(max_abs_diff(back.predict({in})[0], outer.predict({in})[0]), 1e-6);
}

TEST(BuildModels, SequentialFromAnInputOrAnInputShape) {
  Model a = Sequential({Input({4}), layers::Dense({{"units", 3}, {"activation", "relu"}}), layers::Dense({{"units", 1}})});
  EXPECT_EQ(a.get_config()["class_name"], "Sequential");
  EXPECT_EQ(a.layers().size(), 2u);
  EXPECT_EQ(a.count_params(), 4 * 3 + 3 + 3 + 1);
  EXPECT_EQ(a.predict({ramp({2, 4})})[0].shape(), (Shape{2, 1}));
  float sum = 0;
  for (int64_t i = 0; i < 12; ++i) sum += std::fabs(a.get_weights()[0].data<float>()[i]);
  EXPECT_GT(sum, 0.0f);  // initialised, never zeros
  Model b = Sequential({layers::Dense({{"units", 2}, {"input_shape", {5}}})});
  EXPECT_EQ(b.input_shapes()[0], (Shape{-1, 5}));
  EXPECT_FALSE(b.get_config()["config"]["layers"][1]["config"].contains("input_shape"));  // the InputLayer holds it
  // A seed gives the same weights.
  auto seeded = [] { return Sequential({Input({4}), layers::Dense({{"units", 3}})}, "", 11).get_weights()[0]; };
  EXPECT_EQ(max_abs_diff(seeded(), seeded()), 0.0f);
  EXPECT_NE(error_of([] { Sequential({layers::Dense({{"units", 2}})}); }).find("has no input"), std::string::npos);
}

TEST(BuildModels, FreezingAModelFreezesEveryLayer) {
  auto x = Input({4});
  auto y = layers::BatchNormalization()(layers::Dense({{"units", 3}})(x));
  Model m({x}, {y});
  EXPECT_EQ(m.trainable_weights().size(), 4u);
  m.as_layer()->set_trainable(false);
  EXPECT_TRUE(m.trainable_weights().empty());
  EXPECT_FALSE(m.get_layer(1).trainable());  // the layers themselves, as Keras 3's setter
  EXPECT_EQ(m.get_config()["config"]["trainable"], false);
}

// Keras 3 takes the trainable state at the first train step after compile and keeps it until the next
// compile: a layer frozen between compile and training is left alone.
TEST(BuildModels, ALayerFrozenAfterCompileIsNotTrained) {
  auto x = Input({4});
  auto y = layers::Dense({{"units", 1}, {"name", "d"}})(layers::Dense({{"units", 2}, {"name", "first"}})(x));
  Model m({x}, {y});
  m.compile({.optimizer = "sgd", .loss = "mse"});
  m.get_layer("first").set_trainable(false);
  const std::vector<Tensor> before = m.get_weights();
  m.train_on_batch({ramp({8, 4})}, {ramp({8, 1})});
  EXPECT_EQ(max_abs_diff(m.get_weights()[0], before[0]), 0.0f);  // frozen
  EXPECT_GT(max_abs_diff(m.get_weights()[2], before[2]), 0.0f);  // trained
  // Unfrozen after that step: it stays out of training until the next compile (Keras 3.15 does so).
  m.get_layer("first").set_trainable(true);
  const Tensor kept = m.get_weights()[0];
  m.train_on_batch({ramp({8, 4})}, {ramp({8, 1})});
  EXPECT_EQ(max_abs_diff(m.get_weights()[0], kept), 0.0f);
  m.compile({.optimizer = "sgd", .loss = "mse"});
  m.train_on_batch({ramp({8, 4})}, {ramp({8, 1})});
  EXPECT_GT(max_abs_diff(m.get_weights()[0], kept), 0.0f);
}

// model.input and a layer's output of a model built in code are the tensors it was built from: the
// usual feature extractor needs no loaded model.
TEST(BuildModels, AModelsTensorsAreTheOnesItWasBuiltFrom) {
  auto x = Input({3}, {{"name", "x"}});
  auto h = layers::Dense({{"units", 2}, {"name", "h"}})(x);
  Model m({x}, {layers::Dense({{"units", 1}, {"name", "o"}})(h)});
  EXPECT_TRUE(m.inputs()[0] == x);
  EXPECT_TRUE(m.layer_outputs("h")[0] == h);
  Model features({x}, m.layer_outputs("h"));
  Model both({x}, {h, m.outputs()[0]});
  EXPECT_EQ(both.output_shapes().size(), 2u);
}

// A nested model as a model output: Keras 3 counts the nested model's own node first in
// output_layers (its calls are 1 and 2 there); read back, each output is the right call.
TEST(BuildModels, ANestedModelCalledTwiceAsOutputs) {
  auto a = Input({3}, {{"name", "ia"}});
  Model inner({a}, {layers::Dense({{"units", 2}, {"name", "d"}})(a)}, "inner");
  auto x = Input({3}, {{"name", "x"}});
  auto y = Input({3}, {{"name", "y"}});
  Model outer({x, y}, {inner.as_layer()(x), inner.as_layer()(y)}, "outer");
  EXPECT_EQ(Json::parse(outer.to_json())["config"]["output_layers"], Json::parse(R"([["inner", 1, 0], ["inner", 2, 0]])"));
  const std::vector<char> bytes = outer.save_to_memory(FileForm::keras);
  Model back = load_model_from_memory(bytes.data(), bytes.size());
  const Tensor in_x = ramp({2, 3}), in_y = Tensor::zeros({2, 3});
  const std::vector<Tensor> want = outer.predict({in_x, in_y}), got = back.predict({in_x, in_y});
  EXPECT_LT(max_abs_diff(got[0], want[0]), 1e-6);
  EXPECT_LT(max_abs_diff(got[1], want[1]), 1e-6);
  EXPECT_GT(max_abs_diff(got[0], got[1]), 0.0f);
}

// The constructors complete a layer's arguments as Keras does (the table is written from Keras 3;
// tests/python/test_build_models.py holds the configs to live Keras's).
TEST(BuildModels, ConstructorsGiveKerasConfigs) {
  const Json c = layers::Conv2D({{"filters", 8}, {"kernel_size", 3}, {"strides", 2}, {"kernel_initializer", "he_normal"}})
                     ->get_config();
  EXPECT_EQ(c["kernel_size"], Json::parse("[3, 3]"));
  EXPECT_EQ(c["strides"], Json::parse("[2, 2]"));
  EXPECT_EQ(c["padding"], "valid");
  EXPECT_EQ(c["kernel_initializer"]["class_name"], "HeNormal");
  EXPECT_EQ(c["bias_initializer"]["class_name"], "Zeros");
  EXPECT_EQ(layers::MaxPooling2D({{"pool_size", 3}})->get_config()["strides"], Json::parse("[3, 3]"));
  EXPECT_NE(error_of([] { layers::Dense({{"units", 2}, {"unitz", 3}}); })
                .find("Unrecognized keyword arguments passed to Dense: {'unitz': 3}"),
            std::string::npos);
  EXPECT_NE(error_of([] { layers::Dense(); }).find("Dense.__init__() missing 1 required positional argument: 'units'"),
            std::string::npos);
  EXPECT_NE(error_of([] { layers::Dense({{"units", 2}, {"kernel_initializer", "he_normall"}}); })
                .find("Could not interpret initializer identifier: he_normall"),
            std::string::npos);
}

TEST(BuildModels, ErrorsNameTheLayerAndTheValue) {
  auto a = Input({4}, {{"name", "a"}});
  auto b = Input({5}, {{"name", "b"}});
  auto other = Input({4}, {{"name", "other"}});
  // Shapes a layer cannot take.
  EXPECT_NE(error_of([&] { layers::Add({{"name", "plus"}})({a, b}); }).find("plus"), std::string::npos);
  // Outputs that need an input the model is not given.
  auto mixed = layers::Add({{"name", "mixed"}})({a, other});
  const std::string disconnected = error_of([&] { Model({a}, {mixed}); });
  EXPECT_NE(disconnected.find("Graph disconnected"), std::string::npos) << disconnected;
  EXPECT_NE(disconnected.find("'mixed'"), std::string::npos) << disconnected;
  // Unknown classes and two layers of one name.
  EXPECT_NE(error_of([] { layers::layer("Dense2"); }).find("Unknown layer: 'Dense2'"), std::string::npos);
  auto d1 = layers::Dense({{"units", 1}, {"name", "twin"}})(a);
  auto d2 = layers::Dense({{"units", 1}, {"name", "twin"}})(d1);
  EXPECT_NE(error_of([&] { Model({a}, {d2}); }).find("\"twin\" is used 2 times"), std::string::npos);
  // A layer's inputs that are not tensors.
  EXPECT_NE(error_of([&] { call_layer(layers::Dense({{"units", 1}}), {Json(3)}); }).find("no input tensors"),
            std::string::npos);
}

}  // namespace
}  // namespace kerascpp
