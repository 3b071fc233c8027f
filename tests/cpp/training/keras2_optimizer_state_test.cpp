// Keras 2 era .h5 files keep their optimizer state slot by slot (tf.keras 2.0-2.10's OptimizerV2 and
// Keras 2.0-2.3; src/io/keras2_optimizer_layout.h). Each fixture (scripts/fixtures/
// keras2_optimizer_state.py) was saved after 2 epochs; kerascpp loads it and trains epochs 3-4, which
// must match what tf_keras trained from the same state (1e-4 relative: the same float32 arithmetic, in
// another order). A state paired with the wrong variables or restarted moves the losses by 1e-3 or more.
// What does not fit is tested in tests/python/test_keras2_optimizer_state.py (h5py edits the files).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "io/npy/npy.h"
#include "kerascpp/model.h"
#include "kerascpp/warnings.h"
#include "../test_paths.h"

namespace kerascpp {
namespace {

namespace fs = std::filesystem;

struct CaptureWarnings {
  std::vector<std::string> got;
  WarningSink previous = set_warning_sink([this](const std::string& m) { got.push_back(m); });
  ~CaptureWarnings() { set_warning_sink(previous); }
};

Json read_json(const fs::path& p) {
  std::ifstream f(p);
  return Json::parse(f);
}

TEST(Keras2OptimizerState, ResumesAsKerasFromEveryLayout) {
  const fs::path dir = testing::fixture("keras2_optimizers");
  const Json meta = read_json(dir / "meta.json");
  const std::vector<Tensor> x = {io::read_npy((dir / "x.npy").string())}, y = {io::read_npy((dir / "y.npy").string())};
  ASSERT_GE(meta["files"].size(), 14u);
  for (const auto& [file, want] : meta["files"].items()) {
    SCOPED_TRACE(file);
    CaptureWarnings warnings;
    Model m = load_model((dir / file).string());
    ASSERT_TRUE(m.compiled());
    EXPECT_TRUE(warnings.got.empty()) << warnings.got.front();
    EXPECT_EQ(m.optimizer()->class_name(), want["optimizer"].get<std::string>());
    EXPECT_EQ(m.optimizer()->iterations(), want["iterations"].get<int64_t>());
    FitOptions o;
    o.batch_size = meta["fit"]["batch_size"];
    o.epochs = meta["fit"]["epochs"];
    o.initial_epoch = meta["fit"]["initial_epoch"];
    o.shuffle = false;
    o.verbose = 0;
    auto history = m.fit(x, y, o);
    for (const auto& [key, values] : want["history"].items()) {
      const std::vector<double>& got = history->history.at(key);
      ASSERT_EQ(got.size(), values.size()) << key;
      for (size_t e = 0; e < got.size(); ++e) {
        const double k = values[e].get<double>();
        EXPECT_NEAR(got[e], k, 1e-4 * std::max(1.0, std::fabs(k))) << key << " epoch " << e + 3;
      }
    }
  }
}

}  // namespace
}  // namespace kerascpp
