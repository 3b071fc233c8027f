// io/dialect_rules.cpp, the Keras 2 / Keras 3 table read both ways. Whole files of both dialects are
// checked by the fixtures (loaded here, and ours loaded by Keras in tests/python); this checks each
// kind of rule on its own, with the errors.
#include <gtest/gtest.h>

#include "io/dialect_rules.h"

namespace kerascpp::io {
namespace {

Json read2(const std::string& cls, Json c) {
  keras2_layer_keys_to_canonical(cls, c, 2);
  return c;
}
Json write2(const std::string& cls, Json c) {
  canonical_layer_keys_to_keras2(cls, c);
  return c;
}
template <class F>
std::string not_implemented(F f) {
  try {
    f();
  } catch (const NotImplementedError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DialectRules, RenamedKeysReadBothWays) {
  const Json k2 = {{"name", "lr"}, {"alpha", 0.1}};
  const Json canonical = read2("LeakyReLU", k2);
  EXPECT_EQ(canonical, (Json{{"name", "lr"}, {"negative_slope", 0.1}}));
  EXPECT_EQ(write2("LeakyReLU", canonical), k2);
  // Keras 3 loads Keras 2's names too: renamed whatever the file's version.
  Json c = {{"batch_input_shape", {nullptr, 3}}};
  keras2_layer_keys_to_canonical("InputLayer", c, 3);
  EXPECT_EQ(c, (Json{{"batch_shape", {nullptr, 3}}}));
  EXPECT_EQ(write2("InputLayer", c), (Json{{"batch_input_shape", {nullptr, 3}}}));
  // Both names present: the Keras 3 one wins.
  EXPECT_EQ(read2("LeakyReLU", {{"alpha", 0.1}, {"negative_slope", 0.2}}), (Json{{"negative_slope", 0.2}}));
}

TEST(DialectRules, Keras2OnlyKeysDroppedWhenTheyChangeNothing) {
  const Json sep = {{"name", "s"}, {"groups", 1}, {"kernel_initializer", {{"class_name", "GlorotUniform"}}}};
  EXPECT_EQ(read2("SeparableConv2D", sep), (Json{{"name", "s"}}));
  EXPECT_EQ(read2("Conv2DTranspose", {{"groups", 1}}), Json::object());
  EXPECT_EQ(read2("SpatialDropout1D", {{"noise_shape", nullptr}, {"trainable", true}}), Json::object());
  // A Keras 3 file keeps them (Keras 3 wrote them, so they are its own).
  Json c = {{"groups", 1}};
  keras2_layer_keys_to_canonical("DepthwiseConv2D", c, 3);
  EXPECT_EQ(c, (Json{{"groups", 1}}));
  // Conv2D takes groups in both: no rule.
  EXPECT_EQ(read2("Conv2D", {{"groups", 2}}), (Json{{"groups", 2}}));
  const std::string e = not_implemented([] { read2("DepthwiseConv2D", {{"name", "dw"}, {"groups", 2}}); });
  EXPECT_NE(e.find("'dw'"), std::string::npos) << e;
  EXPECT_NE(e.find("groups=2"), std::string::npos) << e;
}

TEST(DialectRules, Keras3OnlyKeysDroppedForKeras2WhenTheyChangeNothing) {
  EXPECT_EQ(write2("Resizing", {{"data_format", "channels_last"}, {"antialias", false}, {"fill_value", 0.0}}),
            Json::object());
  EXPECT_EQ(write2("LayerNormalization", {{"rms_scaling", false}}), Json::object());
  EXPECT_EQ(write2("Dense", {{"units", 2}, {"lora_rank", nullptr}, {"quantization_config", nullptr}}),
            (Json{{"units", 2}}));
  // A kernel choice, whatever it holds: the same values in Keras 2.
  EXPECT_EQ(write2("MultiHeadAttention", {{"num_heads", 2}, {"flash_attention", true}}), (Json{{"num_heads", 2}}));
  // ConvLSTM: tf_keras's time_major (only False) and Keras 3's seed.
  EXPECT_EQ(read2("ConvLSTM2D", {{"filters", 2}, {"time_major", false}}), (Json{{"filters", 2}}));
  EXPECT_EQ(write2("ConvLSTM1D", {{"filters", 2}, {"seed", 3}}), (Json{{"filters", 2}}));
  std::string e = not_implemented([] { write2("Resizing", {{"name", "rs"}, {"data_format", "channels_first"}}); });
  EXPECT_NE(e.find("'rs'"), std::string::npos) << e;
  EXPECT_NE(e.find("data_format=\"channels_first\""), std::string::npos) << e;
  EXPECT_NE(e.find("Keras 2 cannot express"), std::string::npos) << e;
  e = not_implemented([] { write2("CenterCrop", {{"name", "cc"}, {"pad_to_aspect_ratio", true}}); });
  EXPECT_NE(e.find("'cc'"), std::string::npos) << e;
  e = not_implemented([] { write2("LayerNormalization", {{"name", "ln"}, {"rms_scaling", true}}); });
  EXPECT_NE(e.find("rms_scaling=true"), std::string::npos) << e;
}

TEST(DialectRules, ActivationNames) {
  EXPECT_EQ(read2("Dense", {{"activation", "hard_sigmoid"}}), (Json{{"activation", "hard_sigmoid_k2"}}));
  EXPECT_EQ(read2("Dense", {{"activation", "swish"}}), (Json{{"activation", "swish"}}));
  Json k3 = {{"activation", "hard_sigmoid"}};
  keras2_layer_keys_to_canonical("Dense", k3, 3);
  EXPECT_EQ(k3, (Json{{"activation", "hard_sigmoid"}}));  // Keras 3's own formula
  EXPECT_EQ(write2("Dense", {{"activation", "hard_sigmoid_k2"}}), (Json{{"activation", "hard_sigmoid"}}));
  EXPECT_EQ(write2("Dense", {{"activation", "silu"}}), (Json{{"activation", "swish"}}));
  EXPECT_NE(not_implemented([] { write2("Dense", {{"name", "d"}, {"activation", "hard_silu"}}); }).find("hard_silu"),
            std::string::npos);
  EXPECT_NE(not_implemented([] { write2("Dense", {{"activation", "hard_sigmoid"}}); }).find("Keras 2 cannot"),
            std::string::npos);
  EXPECT_NE(not_implemented([] { check_keras3_expressible("Dense", {{"activation", "hard_sigmoid_k2"}}); })
                .find("Keras 3 cannot"),
            std::string::npos);
  EXPECT_EQ(not_implemented([] { check_keras3_expressible("Dense", {{"activation", "hard_sigmoid"}}); }), "(no error)");
}

}  // namespace
}  // namespace kerascpp::io
