// fit / evaluate against real Keras: for every case in tests/fixtures/training (written by
// scripts/make_training_fixtures.py), the Keras-written initial model is loaded (and compiled from
// its own compile_config), trained with the same data and arguments, and its per-epoch history,
// evaluate() results and final weights are compared with Keras's at 1e-4 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "io/npy/npy.h"
#include "kerascpp/model.h"
#include "../test_paths.h"

namespace kerascpp {
namespace {

namespace fs = std::filesystem;

Json read_json(const fs::path& p) {
  std::ifstream f(p);
  return Json::parse(f);
}

bool close(double got, double want, double rtol = 1e-4) {
  return std::fabs(got - want) <= rtol * std::max(1.0, std::fabs(want));
}

FitOptions fit_options(const fs::path& dir, const Json& fit) {
  FitOptions o;
  o.batch_size = fit.value("batch_size", 32);
  o.epochs = fit.value("epochs", 1);
  o.initial_epoch = fit.value("initial_epoch", 0);
  o.shuffle = fit.value("shuffle", true);
  o.validation_split = fit.value("validation_split", 0.0);
  o.verbose = 0;
  if (fit.contains("validation_data") && fit["validation_data"].is_array()) {
    o.validation_x = {io::read_npy((dir / fit["validation_data"][0].get<std::string>()).string())};
    o.validation_y = {io::read_npy((dir / fit["validation_data"][1].get<std::string>()).string())};
  }
  if (fit.contains("sample_weight") && fit["sample_weight"].is_string())
    o.sample_weight = io::read_npy((dir / fit["sample_weight"].get<std::string>()).string());
  if (fit.contains("class_weight") && fit["class_weight"].is_object())
    for (const auto& [k, v] : fit["class_weight"].items()) o.class_weight[std::stoll(k)] = v.get<double>();
  return o;
}

void expect_history(const std::string& what, const callbacks::History& got, const Json& want) {
  for (const auto& [key, values] : want.items()) {
    auto it = got.history.find(key);
    ASSERT_NE(it, got.history.end()) << what << ": no '" << key << "' in kerascpp's history";
    ASSERT_EQ(it->second.size(), values.size()) << what << " " << key;
    for (size_t e = 0; e < values.size(); ++e)
      EXPECT_TRUE(close(it->second[e], values[e].get<double>()))
          << what << " " << key << " epoch " << e + 1 << ": kerascpp " << it->second[e] << ", Keras " << values[e];
  }
}

void expect_weights(const std::string& what, const Model& got, const Model& want) {
  auto a = got.get_weights(), b = want.get_weights();
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t k = 0; k < a[i].size(); ++k)
      // Weights carry the whole run's rounding: a bias that BatchNormalization cancels has a zero
      // gradient up to float noise, so weights are compared at 1e-3 (losses at 1e-4).
      ASSERT_TRUE(close(a[i].data<float>()[k], b[i].data<float>()[k], 1e-3))
          << what << " weight " << i << " element " << k << ": kerascpp " << a[i].data<float>()[k] << ", Keras "
          << b[i].data<float>()[k];
}

std::vector<fs::path> cases() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(testing::fixture("training")))
    if (e.is_directory() && fs::exists(e.path() / "meta.json")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(FitParity, EveryCaseMatchesKerasEpochByEpoch) {
  int ran = 0;
  for (const fs::path& dir : cases()) {
    const Json meta = read_json(dir / "meta.json");
    const std::string name = dir.filename().string();
    const Json& files = meta["files"];
    SCOPED_TRACE(name);
    Model m = load_model((dir / files["model"].get<std::string>()).string());
    ASSERT_TRUE(m.compiled()) << name << ": the Keras-written model should compile from its saved config";
    std::vector<Tensor> x = {io::read_npy((dir / files["x"].get<std::string>()).string())};
    std::vector<Tensor> y = {io::read_npy((dir / files["y"].get<std::string>()).string())};
    RnnStates states;  // a stateful model's (seq_stateful): carried through fit, validation and evaluate
    FitOptions fo = fit_options(dir, meta["fit"]);
    fo.states = &states;
    auto history = m.fit(x, y, fo);
    expect_history(name, *history, meta["history"]);
    // A resume case's evaluate() and trained model are after its 4 epochs (the resume test).
    const bool resume = meta.contains("resume");
    if (meta.contains("evaluate") && !resume) {
      EvaluateOptions eo;
      eo.verbose = 0;
      eo.batch_size = meta["evaluate_args"].value("batch_size", 32);
      eo.states = &states;
      Logs logs = m.evaluate(x, y, eo);
      for (const auto& [k, v] : meta["evaluate"].items())
        EXPECT_TRUE(close(logs.at(k), v.get<double>())) << name << " evaluate " << k << ": " << logs.at(k) << " vs " << v;
    }
    if (files.contains("trained") && !resume) {
      LoadOptions lo;
      lo.compile = false;
      expect_weights(name, m, load_model((dir / files["trained"].get<std::string>()).string(), lo));
    }
    ++ran;
  }
  EXPECT_GE(ran, 30);
}

}  // namespace
}  // namespace kerascpp

namespace kerascpp {
namespace {

// A model saved by Keras after 2 epochs, with its optimizer state, continues in kerascpp as it
// continued in Keras (the .keras archive, Keras 3's legacy .h5 and tf-keras's .h5).
TEST(FitParity, ResumesFromKerasSavedOptimizerState) {
  int ran = 0;
  for (const char* c : {"resume_keras3", "resume_tf_keras"}) {
    const fs::path dir = testing::fixture(std::string("training/") + c);
    const Json meta = read_json(dir / "meta.json");
    std::vector<Tensor> x = {io::read_npy((dir / "x.npy").string())}, y = {io::read_npy((dir / "y.npy").string())};
    for (const Json& file : meta["resume"]["from_files"]) {
      SCOPED_TRACE(std::string(c) + "/" + file.get<std::string>());
      Model m = load_model((dir / file.get<std::string>()).string());
      ASSERT_TRUE(m.compiled());
      ASSERT_EQ(m.optimizer()->iterations(), 8);
      auto history = m.fit(x, y, fit_options(dir, meta["resume"]["fit"]));
      expect_history(file.get<std::string>(), *history, meta["resume"]["history"]);
      ++ran;
    }
  }
  EXPECT_EQ(ran, 3);
}

}  // namespace
}  // namespace kerascpp
