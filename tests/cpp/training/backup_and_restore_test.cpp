// BackupAndRestore: a fit interrupted by an exception resumes from the backup (weights, optimizer
// state, epoch) and ends where an uninterrupted fit ends; a corrupt backup falls back on the previous
// one with double_checkpoint, and is a clear error without it. tests/python/test_fit_data.py runs the
// same interruption in real Keras.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fixture_json.h"
#include "io/npy/npy.h"
#include "kerascpp/model.h"

namespace kerascpp {
namespace {
namespace fs = std::filesystem;

struct Training {
  Model model;
  std::vector<Tensor> x, y;
};

Training adam() {  // the mlp_adam fixture: compiled with Adam in its file
  const std::string dir = testing::fixture("training/mlp_adam/");
  return {load_model(dir + "model.keras"), {io::read_npy(dir + "x.npy")}, {io::read_npy(dir + "y.npy")}};
}

FitOptions quiet(int epochs, std::vector<callbacks::CallbackPtr> cbs) {
  FitOptions o;
  o.epochs = epochs, o.verbose = 0, o.shuffle = false, o.batch_size = 10, o.seed = 3, o.callbacks = std::move(cbs);
  return o;
}

struct PowerCut : callbacks::Callback {
  int at;
  explicit PowerCut(int epoch) : at(epoch) {}
  void on_epoch_end(int epoch, Logs&) override {
    if (epoch == at) throw std::runtime_error("power cut");
  }
};

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("kcpp_backup_" + name);
  fs::remove_all(d);
  return d;
}

TEST(BackupAndRestore, AnInterruptedFitResumesAndEndsAsAWholeOne) {
  const fs::path dir = fresh_dir("resume");
  Training whole = adam(), first = adam(), second = adam();
  whole.model.fit(whole.x, whole.y, quiet(4, {}));
  auto backup = [&] { return std::make_shared<callbacks::BackupAndRestore>(dir.string()); };
  EXPECT_THROW(first.model.fit(first.x, first.y, quiet(4, {backup(), std::make_shared<PowerCut>(1)})), std::runtime_error);
  ASSERT_TRUE(fs::exists(dir / "latest.weights.h5"));
  const auto h = second.model.fit(second.x, second.y, quiet(4, {backup()}));
  EXPECT_EQ(h->epoch, (std::vector<int>{2, 3}));
  EXPECT_FALSE(fs::exists(dir));  // deleted when fit ends normally
  const auto a = second.model.get_weights(), b = whole.model.get_weights();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t k = 0; k < a[i].size(); ++k) EXPECT_NEAR(a[i].data<float>()[k], b[i].data<float>()[k], 1e-6f);
  EXPECT_EQ(second.model.optimizer()->iterations(), whole.model.optimizer()->iterations());
}

TEST(BackupAndRestore, ACorruptBackupFallsBackOrIsAClearError) {
  const fs::path dir = fresh_dir("corrupt");
  Training run = adam();
  auto keep = std::make_shared<callbacks::BackupAndRestore>(
      dir.string(), Json{{"double_checkpoint", true}, {"delete_checkpoint", false}});
  run.model.fit(run.x, run.y, quiet(2, {keep}));
  ASSERT_TRUE(fs::exists(dir / "latest.weights.h5.bkp"));
  std::ofstream(dir / "latest.weights.h5", std::ios::trunc) << "not hdf5";
  Training again = adam();
  const auto h = again.model.fit(again.x, again.y, quiet(3, {keep}));
  EXPECT_EQ(h->epoch, (std::vector<int>{1, 2}));  // the .bkp of epoch 1 was restored
  std::ofstream(dir / "training_metadata.json", std::ios::trunc) << "{\"epoch\": \"two\"}";
  fs::remove(dir / "latest.weights.h5.bkp");
  Training third = adam();
  const std::string e = testing::error_of<IOError>([&] { third.model.fit(third.x, third.y, quiet(3, {keep})); });
  EXPECT_NE(e.find("training_metadata.json"), std::string::npos) << e;
  EXPECT_THROW(callbacks::BackupAndRestore(""), ValueError);
  EXPECT_THROW(callbacks::BackupAndRestore("d", Json{{"save_freq", "often"}}), ValueError);
  EXPECT_THROW(callbacks::BackupAndRestore("d", Json{{"save_frq", 2}}), ValueError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kerascpp
