// Hashing and IntegerLookup: the fixtures lookup_and_hashing and adapted_integer_lookup check their
// values against Keras; these check what Keras refuses or cannot hold, and the hashes themselves.
#include <gtest/gtest.h>

#include "../test_errors.h"
#include "../test_paths.h"
#include "kerascpp/kerascpp.h"
#include "layers/preprocessing/string_hash.h"

namespace kerascpp {
namespace {
using testing::error_of;

Tensor ids(std::vector<float> v) {
  Tensor t = Tensor::empty({1, static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}
Tensor call(const Layer& l, const Tensor& x) { return l.call({x}, CallContext{})[0]; }

// Values of tf.strings.to_hash_bucket_fast / _strong(key=[133, 137]) on tf.strings.as_string of int64s,
// with 2^63 - 1 buckets (TensorFlow 2.21).
TEST(StringHash, MatchesTensorFlow) {
  using layers::decimal;
  const uint64_t big = (uint64_t{1} << 63) - 1;
  EXPECT_EQ(layers::farmhash_fingerprint64(decimal(0)) % big, 5975597238397796928u);
  EXPECT_EQ(layers::farmhash_fingerprint64(decimal(-3)) % big, 245568598851291699u);
  EXPECT_EQ(layers::farmhash_fingerprint64(decimal(123456789)) % big, 7102376421209267306u);
  EXPECT_EQ(layers::farmhash_fingerprint64(decimal(INT64_MIN)) % big, 1493431938208774112u);  // 20 bytes
  EXPECT_EQ(layers::siphash24(133, 137, decimal(1)) % big, 1754971695320160519u);
  EXPECT_EQ(layers::siphash24(133, 137, decimal(123456789)) % big, 6430279690345042121u);
  EXPECT_EQ(layers::siphash24(133, 137, decimal(INT64_MAX)) % big, 2645002250675734019u);
}

TEST(Hashing, RefusesWhatItCannotHash) {
  EXPECT_NE(error_of([] { make_layer("Hashing", {{"name", "h"}, {"num_bins", 0}}); }).find("num_bins"), std::string::npos);
  EXPECT_NE(error_of([] { make_layer("Hashing", {{"name", "h"}, {"num_bins", 3}, {"salt", "x"}}); }).find("salt"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_layer("Hashing", {{"name", "h"}, {"num_bins", 3}, {"mask_value", ""}}); }).find("string"),
            std::string::npos);
  auto h = make_layer("Hashing", {{"name", "h"}, {"num_bins", 3}});
  EXPECT_NE(error_of([&] { call(*h, ids({1.f, NAN})); }).find("Layer 'h' (Hashing) received nan"), std::string::npos);
}

TEST(IntegerLookup, RefusesBadVocabulariesAndModes) {
  auto make = [](Json c) { c["name"] = "lookup"; return make_layer("IntegerLookup", c); };
  EXPECT_NE(error_of([&] { make({{"vocabulary", {3, 4, 3}}}); }).find("repeated"), std::string::npos);
  EXPECT_NE(error_of([&] { make({{"vocabulary", {3, 0}}, {"mask_token", 0}}); }).find("mask token"), std::string::npos);
  EXPECT_NE(error_of([&] { make({{"vocabulary", {3, 4}}, {"max_tokens", 2}}); }).find("max_tokens"), std::string::npos);
  EXPECT_NE(error_of([&] { make({{"vocabulary", "/etc/vocab.txt"}}); }).find("never reads files"), std::string::npos);
  EXPECT_NE(error_of([&] { make({{"vocabulary", {3}}, {"output_mode", "tf_idf"}}); }).find("tf_idf"), std::string::npos);
  EXPECT_NE(error_of([&] { make({{"vocabulary", {3}}, {"invert", true}, {"output_mode", "count"}}); }).find("invert"),
            std::string::npos);
  EXPECT_NE(error_of([&] { make({{"vocabulary", {3}}, {"salt", 5}}); }).find("farmhash"), std::string::npos);
  EXPECT_NE(error_of([&] { make({{"vocabulary", {5, 3}}, {"invert", true}, {"oov_token", 3}}); }).find("OOV token"),
            std::string::npos);
  EXPECT_NE(error_of([&] { make({{"vocabulary", {1 << 25}}, {"invert", true}}); }).find("2^24"), std::string::npos);
  EXPECT_NE(error_of([&] { make({{"vocabulary", {3}}, {"invert", true}, {"mask_token", 1 << 25}}); }).find("2^24"),
            std::string::npos);
  EXPECT_NE(error_of([&] { make({{"vocabulary", {3, "x"}}}); }).find("`vocabulary` in the config of layer 'lookup'"), std::string::npos);
  EXPECT_NE(error_of([&] { make({{"vocabulary", {3, 4}}, {"vocabulary_size", 9}}); }).find("vocabulary_size"),
            std::string::npos);
}

TEST(IntegerLookup, ZeroOovIndicesRefusesUnknownTokens) {
  auto l = make_layer("IntegerLookup", {{"name", "lookup"}, {"vocabulary", {3, 4}}, {"num_oov_indices", 0}});
  EXPECT_EQ(call(*l, ids({4.f, 3.f})).data<float>()[0], 1.f);
  EXPECT_NE(error_of([&] { call(*l, ids({4.f, 9.f})); }).find("found OOV values [9]"), std::string::npos);
}

TEST(IntegerLookup, AVocabularyLessLayerRefusesToPredict) {
  auto l = make_layer("IntegerLookup", {{"name", "lookup"}});  // never adapted, or adapted and saved as .h5
  EXPECT_NE(error_of([&] { call(*l, ids({1.f})); }).find("Layer 'lookup' (IntegerLookup) has no vocabulary"),
            std::string::npos);
  l->load_assets({{"vocabulary.txt", "-1\n7\n9\n\n"}});  // an adapted layer's asset: the OOV token first
  const Tensor y = call(*l, ids({9.f, 7.f, 2.f}));
  EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + 3), (std::vector<float>{2.f, 1.f, 0.f}));
  EXPECT_EQ(l->config_from_assets()["vocabulary"], Json({-1, 7, 9}));
  auto bad = make_layer("IntegerLookup", {{"name", "lookup"}});
  EXPECT_NE(error_of([&] { bad->load_assets({{"vocabulary.txt", "-1\n7x\n"}}); }).find("line 2"), std::string::npos);
  EXPECT_NE(error_of([&] { bad->load_assets({{"vocabulary.txt", "-1\n\n7\n"}}); }).find("line 2"), std::string::npos);
  auto crlf = make_layer("IntegerLookup", {{"name", "lookup"}});
  crlf->load_assets({{"vocabulary.txt", "-1\r\n7\r\n9\r\n"}});  // written on Windows
  EXPECT_EQ(crlf->get_config()["vocabulary"], Json({-1, 7, 9}));
}

TEST(Model, RefusesIntegerInputsFloat32CannotHold) {
  Model m = load_model(testing::fixture("lookup_and_hashing/keras3/model.keras"));
  Tensor a = Tensor::zeros({1, 4}, DType::int64), b = Tensor::zeros({1, 3}, DType::int64);
  a.data<int64_t>()[2] = (int64_t{1} << 24) + 1;
  EXPECT_NE(error_of([&] { m.predict({a, b}); }).find("received the integer 16777217"), std::string::npos);
  a.data<int64_t>()[2] = int64_t{1} << 24;  // exact in float32
  EXPECT_EQ(m.predict({a, b}).size(), 10u);
}

}  // namespace
}  // namespace kerascpp
