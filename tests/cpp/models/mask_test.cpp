// Masks through the Functional graph (keras/src/layers/layer.py): a layer that supports masking passes
// its input's mask on, merges combine them with a logical and (tf_keras's rule: only tf_keras graphs
// leave masks to propagation, Keras 3 records each call's mask), a recorded `mask=` (null included) is
// what the call gets, and a layer that does not support masking drops it with Keras's warning, once.
// Parity with Keras for the masks Embedding / Masking make and RNNs consume is checked by the fixtures
// (tests/fixtures/seq_*).
#include <gtest/gtest.h>

#include "kerascpp/model.h"
#include "kerascpp/warnings.h"
#include "../test_errors.h"

namespace kerascpp {
namespace {

Json tensor(const std::string& layer) {
  return {{"class_name", "__keras_tensor__"}, {"config", {{"keras_history", {layer, 0, 0}}}}};
}
Json entry(const std::string& cls, Json config, std::vector<Json> args) {
  const std::string name = config["name"];
  Json calls = Json::array();
  if (!args.empty()) calls.push_back({{"args", args.size() == 1 ? Json::array({args[0]}) : Json::array({args})}, {"kwargs", Json::object()}});
  return {{"class_name", cls}, {"name", name}, {"config", config}, {"inbound_nodes", calls}};
}

// Weights of alternating sign, growing by `growth`: deterministic and not symmetric.
Model with_weights(Model m, float first, float growth) {
  std::vector<Tensor> w;
  float v = first;
  for (const VariablePtr& var : m.weights()) {
    Tensor t = Tensor::empty(var->shape());
    for (int64_t i = 0; i < t.size(); ++i, v = -v * growth) t.data<float>()[i] = v;
    w.push_back(t);
  }
  m.set_weights(w);
  return m;
}

Model tokens_then_lstm(bool mask_zero, Json lstm_kwargs) {
  Json layers = Json::array({
      entry("InputLayer", {{"name", "a"}, {"batch_shape", {nullptr, 4}}}, {}),
      entry("Embedding", {{"name", "e"}, {"input_dim", 5}, {"output_dim", 2}, {"mask_zero", mask_zero}}, {tensor("a")}),
      entry("LSTM", {{"name", "lstm"}, {"units", 3}}, {tensor("e")}),
  });
  layers[2]["inbound_nodes"][0]["kwargs"] = lstm_kwargs;
  Json config = {{"class_name", "Functional"},
                 {"config",
                  {{"name", "m"}, {"layers", layers}, {"input_layers", {{"a", 0, 0}}}, {"output_layers", {{"lstm", 0, 0}}}}}};
  return with_weights(model_from_json(config.dump()), 0.2f, 1.03f);
}

TEST(Masks, ARecordedNullMaskMeansTheCallGetsNone) {
  const Tensor x = Tensor::from_vector({1, 4}, {1, 2, 0, 0});
  const Tensor unmasked = tokens_then_lstm(false, Json::object()).predict({x})[0];
  const Tensor masked = tokens_then_lstm(true, Json::object()).predict({x})[0];
  const Tensor null_mask = tokens_then_lstm(true, {{"mask", nullptr}}).predict({x})[0];
  bool differs = false;
  for (int u = 0; u < 3; ++u) {
    differs = differs || masked.data<float>()[u] != unmasked.data<float>()[u];
    EXPECT_EQ(null_mask.data<float>()[u], unmasked.data<float>()[u]);
  }
  EXPECT_TRUE(differs);  // the mask mattered where it was not overridden
}

TEST(Masks, AMaskGivenByHandCannotBeSavedForTfKeras) {
  // An LSTM called with mask=<a model input>: Keras 3 records it; tf_keras has no way to say it.
  Json layers = Json::array({
      entry("InputLayer", {{"name", "x"}, {"batch_shape", {nullptr, 4, 2}}}, {}),
      entry("InputLayer", {{"name", "m"}, {"batch_shape", {nullptr, 4}}}, {}),
      entry("LSTM", {{"name", "lstm"}, {"units", 3}}, {tensor("x")}),
  });
  layers[2]["inbound_nodes"][0]["kwargs"] = {{"mask", tensor("m")}};
  Json config = {{"class_name", "Functional"},
                 {"config",
                  {{"name", "hand"},
                   {"layers", layers},
                   {"input_layers", {{"x", 0, 0}, {"m", 0, 0}}},
                   {"output_layers", {{"lstm", 0, 0}}}}}};
  Model model = with_weights(model_from_json(config.dump()), 0.3f, 1.02f);
  // The given mask is used: a masked last step repeats the third step's output.
  const Tensor x = Tensor::from_vector({1, 4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor all = model.predict({x, Tensor::from_vector({1, 4}, {1, 1, 1, 1})})[0];
  const Tensor three = model.predict({x, Tensor::from_vector({1, 4}, {1, 1, 1, 0})})[0];
  EXPECT_NE(all.data<float>()[0], three.data<float>()[0]);
  EXPECT_NO_THROW((void)model.to_json(KerasDialect::keras3));
  try {
    (void)model.to_json(KerasDialect::keras2);
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("'lstm' uses a mask given by hand (mask=m)"), std::string::npos) << e.what();
  }
}

// Two token inputs, each embedded with mask_zero, added (masks and-ed), then an LSTM over the sum and a
// Flatten of the first embedding (which drops its mask).
// keras2: the Add as read from a tf_keras file (io/config_dialect.cpp marks it).
Model masked_model(bool keras2 = true, bool mask_zero = true) {
  Json layers = Json::array({
      entry("InputLayer", {{"name", "a"}, {"batch_shape", {nullptr, 4}}}, {}),
      entry("InputLayer", {{"name", "b"}, {"batch_shape", {nullptr, 4}}}, {}),
      entry("Embedding", {{"name", "ea"}, {"input_dim", 5}, {"output_dim", 2}, {"mask_zero", mask_zero}}, {tensor("a")}),
      entry("Embedding", {{"name", "eb"}, {"input_dim", 5}, {"output_dim", 2}, {"mask_zero", mask_zero}}, {tensor("b")}),
      entry("Add", {{"name", "add"}, {"kerascpp_keras2", keras2}}, {tensor("ea"), tensor("eb")}),
      entry("LSTM", {{"name", "lstm"}, {"units", 3}, {"return_sequences", true}}, {tensor("add")}),
      entry("Flatten", {{"name", "flat"}}, {tensor("ea")}),
  });
  Json config = {{"class_name", "Functional"},
                 {"config",
                  {{"name", "m"},
                   {"layers", layers},
                   {"input_layers", {{"a", 0, 0}, {"b", 0, 0}}},
                   {"output_layers", {{"lstm", 0, 0}, {"flat", 0, 0}}}}}};
  return with_weights(model_from_json(config.dump()), 0.1f, 1.01f);
}

TEST(Masks, Keras3MergesOrTheMasks) {
  const Tensor a = Tensor::from_vector({1, 4}, {1, 2, 3, 0}), b = Tensor::from_vector({1, 4}, {4, 0, 1, 2});
  // or-ed mask: every step kept, as without masks.
  const Tensor y = masked_model(false).predict({a, b})[0], plain = masked_model(false, false).predict({a, b})[0];
  for (int i = 0; i < 12; ++i) EXPECT_EQ(y.data<float>()[i], plain.data<float>()[i]);
  EXPECT_FALSE(masked_model(false).to_json(KerasDialect::keras3).find("kerascpp_") != std::string::npos);
}

TEST(Masks, TfKerasMergesAndTheMasksAndAnRnnSkipsTheMaskedSteps) {
  Model m = masked_model();
  const Tensor a = Tensor::from_vector({1, 4}, {1, 2, 3, 0}), b = Tensor::from_vector({1, 4}, {4, 0, 1, 2});
  const Tensor y = m.predict({a, b})[0];
  // and-ed mask: steps 0 and 2 kept. The LSTM on those two steps alone must give the same outputs.
  const Tensor a2 = Tensor::from_vector({1, 4}, {1, 3, 0, 0}), b2 = Tensor::from_vector({1, 4}, {4, 1, 0, 0});
  const Tensor y2 = m.predict({a2, b2})[0];
  for (int u = 0; u < 3; ++u) {
    EXPECT_EQ(y.data<float>()[0 * 3 + u], y2.data<float>()[0 * 3 + u]);
    EXPECT_EQ(y.data<float>()[1 * 3 + u], y.data<float>()[0 * 3 + u]);  // masked step: output repeated
    EXPECT_EQ(y.data<float>()[2 * 3 + u], y2.data<float>()[1 * 3 + u]);
  }
}

TEST(Masks, ALayerThatCannotTakeAMaskDropsItWithKerassWarningOnce) {
  Model m = masked_model();
  std::vector<std::string> warnings;
  WarningSink previous = set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
  const Tensor a = Tensor::from_vector({1, 4}, {1, 2, 3, 0}), b = Tensor::from_vector({1, 4}, {4, 0, 1, 2});
  (void)m.predict({a, b});
  (void)m.predict({a, b});
  set_warning_sink(previous);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("Layer 'flat' (of type Flatten) was passed an input with a mask attached to it"),
            std::string::npos)
      << warnings[0];
}

}  // namespace
}  // namespace kerascpp

namespace kerascpp {
namespace {
using testing::error_of;

Model attention_model(Json kwargs, std::vector<Json> args) {
  Json mha = entry("MultiHeadAttention", {{"name", "mha"}, {"num_heads", 2}, {"key_dim", 2}}, {});
  mha["inbound_nodes"] = Json::array({{{"args", args}, {"kwargs", kwargs}}});
  Json layers = Json::array({entry("InputLayer", {{"name", "q"}, {"batch_shape", {nullptr, 3, 4}}}, {}),
                             entry("InputLayer", {{"name", "v"}, {"batch_shape", {nullptr, 5, 4}}}, {}), mha});
  Json outputs = kwargs.value("return_attention_scores", false) ? Json{{"mha", 0, 0}, {"mha", 0, 1}} : Json{{"mha", 0, 0}};
  Json config = {{"class_name", "Functional"},
                 {"config", {{"name", "m"}, {"layers", layers}, {"input_layers", {{"q", 0, 0}, {"v", 0, 0}}},
                             {"output_layers", outputs}}}};
  return with_weights(model_from_json(config.dump()), 0.3f, 1.02f);
}

TEST(CallArguments, OptionsAndTensorsByPositionOrKeywordReachTheLayer) {
  const Tensor q = Tensor::from_vector({1, 3, 4}, std::vector<float>(12, 0.5f));
  std::vector<float> vv(20);
  for (int i = 0; i < 20; ++i) vv[i] = 0.1f * i;
  const Tensor v = Tensor::from_vector({1, 5, 4}, vv);
  // value by position or by keyword: the same call.
  Model positional = attention_model({{"use_causal_mask", true}}, {tensor("q"), tensor("v")});
  Model keyword = attention_model({{"use_causal_mask", true}, {"value", tensor("v")}}, {tensor("q")});
  const Tensor a = positional.predict({q, v})[0], b = keyword.predict({q, v})[0];
  for (int i = 0; i < a.size(); ++i) EXPECT_EQ(a.data<float>()[i], b.data<float>()[i]);
  // The config keeps the value by keyword and the option.
  EXPECT_NE(positional.to_json().find("\"use_causal_mask\":true"), std::string::npos);
  EXPECT_NE(positional.to_json().find("\"value\":{"), std::string::npos);
  // return_attention_scores adds the scores: (batch, heads, 3, 5), causal (query 0 sees value 0 only).
  Model scored = attention_model({{"use_causal_mask", true}, {"return_attention_scores", true}}, {tensor("q"), tensor("v")});
  const std::vector<Tensor> out = scored.predict({q, v});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].shape(), (Shape{1, 2, 3, 5}));
  EXPECT_FLOAT_EQ(out[1].data<float>()[0], 1.f);
  EXPECT_EQ(out[1].data<float>()[1], 0.f);
}

TEST(CallArguments, UnknownOptionsAndTensorKeywordsAreRefusedByName) {
  EXPECT_NE(error_of([] { attention_model({{"use_flash", true}}, {tensor("q"), tensor("v")}); })
                .find("Layer 'mha' (MultiHeadAttention) in model 'm' is called with use_flash=true"),
            std::string::npos);
  EXPECT_NE(error_of([] { attention_model({{"bias", tensor("v")}}, {tensor("q"), tensor("v")}); })
                .find("tensors in the keyword argument 'bias'"),
            std::string::npos);
  EXPECT_NE(error_of([] { attention_model({{"value", tensor("v")}}, {tensor("q"), tensor("v")}); })
                .find("gives argument 'value' twice"),
            std::string::npos);
  // attention_mask is fourth in tf_keras's positional order and seventh in Keras 3's: keyword only.
  EXPECT_NE(error_of([] { attention_model(Json::object(), {tensor("q"), tensor("v"), tensor("v"), tensor("q")}); })
                .find("'attention_mask' is taken by keyword only"),
            std::string::npos);
  EXPECT_NE(error_of([] { attention_model(Json::object(), {tensor("q"), tensor("v"), tensor("v"), nullptr, nullptr, nullptr, nullptr, 3}); })
                .find("past its tensor arguments"),
            std::string::npos);
  EXPECT_EQ(error_of([] { attention_model(Json::object(), {tensor("q"), tensor("v"), nullptr, nullptr}); }), "");  // defaults
  // training is the train step's to decide; a null option is Keras's default.
  EXPECT_EQ(error_of([] { attention_model({{"training", false}, {"attention_mask", nullptr}}, {tensor("q"), tensor("v")}); }), "");
}

}  // namespace
}  // namespace kerascpp

namespace kerascpp {
namespace {

TEST(Masks, MasksGivenWithTheInputsStartTheGraphsMasks) {
  Json layers = Json::array({entry("InputLayer", {{"name", "x"}, {"batch_shape", {nullptr, 4, 2}}}, {}),
                             entry("LSTM", {{"name", "lstm"}, {"units", 3}}, {tensor("x")})});
  Json config = {{"class_name", "Functional"},
                 {"config", {{"name", "m"}, {"layers", layers}, {"input_layers", {{"x", 0, 0}}}, {"output_layers", {{"lstm", 0, 0}}}}}};
  Model m = with_weights(model_from_json(config.dump()), 0.2f, 1.03f);
  const Tensor x = Tensor::from_vector({1, 4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor other = Tensor::from_vector({1, 4, 2}, {1, 2, 3, 4, -5, 9, 0, 1});  // differs at masked steps
  const Tensor mask = Tensor::from_vector({1, 4}, {1, 1, 0, 0});
  const Tensor a = m({x}, {mask})[0], b = m({other}, {mask})[0], plain = m({x})[0];
  bool differs = false;
  for (int u = 0; u < 3; ++u) {
    EXPECT_EQ(a.data<float>()[u], b.data<float>()[u]);  // masked steps are skipped
    differs = differs || a.data<float>()[u] != plain.data<float>()[u];
  }
  EXPECT_TRUE(differs);
  const Tensor none = m({x}, {Tensor()})[0];  // an undefined mask is no mask
  for (int u = 0; u < 3; ++u) EXPECT_EQ(none.data<float>()[u], plain.data<float>()[u]);
  auto error_of = [&](const std::vector<Tensor>& masks) {
    try {
      m({x}, masks);
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of({Tensor::from_vector({1, 3}, {1, 1, 1})}).find("The mask of input 0 ('x') of model 'm' must cover"),
            std::string::npos);
  EXPECT_NE(error_of({mask, mask}).find("one mask per input (1)"), std::string::npos);
}

}  // namespace
}  // namespace kerascpp
