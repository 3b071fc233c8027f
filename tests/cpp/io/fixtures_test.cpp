// Every fixture written by real Keras (scripts/make_fixtures.py), in every form, predicts Keras's own
// outputs.
#include <gtest/gtest.h>

#include <fstream>

#include "../test_paths.h"
#include "support/fixture_check.h"

namespace kerascpp {
namespace {

std::vector<std::string> fixture_dirs() { return support::find_fixture_dirs(testing::fixture("")); }

TEST(Fixtures, ThereAreFixturesOfBothWriters) {
  auto dirs = fixture_dirs();
  int k3 = 0, k2 = 0;
  for (const auto& d : dirs) {
    k3 += d.find("/keras3") != std::string::npos;
    k2 += d.find("/tf_keras") != std::string::npos;
  }
  EXPECT_GE(k3, 10);
  EXPECT_GE(k2, 10);
}

class FixtureDir : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureDir, EveryFormMatchesKeras) {
  auto results = support::check_fixture_dir(GetParam());  // 1e-5 of each output's scale, or meta.json's bound
  const bool emulated = GetParam().find("keras2_emulated") != std::string::npos;  // .h5 only
  // Every form the writer saved and read back itself (meta.json "forms"): .keras, .h5 and JSON +
  // weights, except where Keras cannot read its own .h5 (Keras 3 with keras.applications helper
  // layers or keras.ops nodes; the runner records that under "skipped").
  size_t forms = 3;
  std::ifstream meta(GetParam() + "/meta.json");
  if (meta) forms = Json::parse(meta).value("forms", Json::object()).size();
  EXPECT_GE(results.size(), emulated ? 1u : forms) << "expected the forms of meta.json";
  for (const auto& r : results) {
    EXPECT_TRUE(r.ok) << r.form << ": "
                      << (r.error.empty() ? "max_abs=" + std::to_string(r.max_abs) : r.error);
  }
}

INSTANTIATE_TEST_SUITE_P(All, FixtureDir, ::testing::ValuesIn(fixture_dirs()), [](const auto& info) {
  std::string n = info.param.substr(info.param.find("fixtures/") + 9);
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

}  // namespace
}  // namespace kerascpp
