// ModelCheckpoint fed the logs real Keras 3 was fed: same files saved (names formatted from the
// epoch and logs), same best value, same messages; and Keras's constructor errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "callbacks_fixture.h"
#include "kerascpp/error.h"

namespace kerascpp::callbacks {
namespace {

using namespace kerascpp::testing;
namespace fs = std::filesystem;

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

TEST(ModelCheckpoint, MatchesKeras3) {
  Model m = small_model();
  int n = 0;
  for (const auto& c : callbacks_reference()["model_checkpoint"]) {
    SCOPED_TRACE(c["filepath"].get<std::string>() + " " + c["kwargs"].dump());
    fs::path dir = temp_path("checkpoint_" + std::to_string(n));
    fs::remove_all(dir);
    fs::create_directories(dir);
    ModelCheckpoint cb((dir / c["filepath"].get<std::string>()).string(), c["kwargs"]);
    cb.set_model(&m);
    std::string out, err;
    {
      Capture o(std::cout), e(std::cerr);
      Logs empty;
      for (size_t i = 0; i < c["logs"].size(); ++i) {
        Logs l = logs_of(c["logs"][i]);
        cb.on_epoch_end(static_cast<int>(i), l);
      }
      out = o.text(), err = e.text();
    }
    EXPECT_EQ(replace_all(out, dir.string() + "/", "<tmp>/"), c["stdout"].get<std::string>());
    std::set<std::string> want, have;
    for (const auto& s : c["saved"]) want.insert(s[1].get<std::string>());
    for (const auto& f : fs::directory_iterator(dir)) have.insert(f.path().filename().string());
    EXPECT_EQ(have, want);
    if (c["best"].is_null()) {
      EXPECT_TRUE(std::isnan(cb.best()));
    } else {
      EXPECT_EQ(cb.best(), num(c["best"]));
    }
    if (!c["warnings"].empty()) EXPECT_EQ(err, "UserWarning: " + c["warnings"][0].get<std::string>() + "\n");
    ++n;
  }
  EXPECT_GE(n, 9);
}

TEST(ModelCheckpoint, SavedFilesLoadBack) {
  Model m = small_model();
  fill_weights(m, 0.25f);
  fs::path dir = temp_path("checkpoint_load");
  fs::remove_all(dir);
  ModelCheckpoint full((dir / "sub" / "m-{epoch:02d}.keras").string());  // creates the folders
  ModelCheckpoint weights((dir / "w.weights.h5").string(), Json{{"save_weights_only", true}});
  full.set_model(&m);
  weights.set_model(&m);
  Logs l;
  l.set("loss", 0.5);
  full.on_epoch_end(4, l);
  weights.on_epoch_end(4, l);
  Model back = load_model((dir / "sub" / "m-05.keras").string());
  EXPECT_EQ(back.get_weights()[0].data<float>()[0], 0.25f);
  Model other = small_model();
  other.load_weights((dir / "w.weights.h5").string());
  EXPECT_EQ(other.get_weights()[0].data<float>()[0], 0.25f);
}

TEST(ModelCheckpoint, ConstructorErrorsAsKeras3) {
  for (const auto& c : callbacks_reference()["model_checkpoint_errors"]) {
    SCOPED_TRACE(c.dump());
    if (c["error"].is_null()) {
      EXPECT_NO_THROW(ModelCheckpoint(c["filepath"].get<std::string>(), c["kwargs"]));
      continue;
    }
    try {
      ModelCheckpoint cb(c["filepath"].get<std::string>(), c["kwargs"]);
      ADD_FAILURE() << "no error";
    } catch (const ValueError& e) {
      EXPECT_EQ(e.what(), c["error"].get<std::string>());
    }
  }
  EXPECT_THROW(ModelCheckpoint("m.keras", Json{{"save_freq", 0}}), ValueError);
  EXPECT_THROW(ModelCheckpoint("m.keras", Json{{"monitr", "loss"}}), ValueError);
}

// An integer save_freq counts batches across epochs (Keras's _should_save_on_batch) and names the file
// with the epoch and the batch (from 1). tests/python/test_fit_data.py checks the names against Keras.
TEST(ModelCheckpoint, EveryNBatchesAcrossEpochs) {
  Model m = small_model();
  fs::path dir = temp_path("checkpoint_batches");
  fs::remove_all(dir);
  ModelCheckpoint cb((dir / "{epoch}-{batch}.weights.h5").string(),
                     Json{{"save_freq", 3}, {"save_weights_only", true}});
  cb.set_model(&m);
  Logs l;
  cb.on_train_begin(l);
  for (int epoch = 0; epoch < 3; ++epoch) {
    cb.on_epoch_begin(epoch, l);
    for (int64_t batch = 0; batch < 4; ++batch) cb.on_train_batch_end(batch, l);
    cb.on_epoch_end(epoch, l);
  }
  std::set<std::string> files;
  for (const auto& f : fs::directory_iterator(dir)) files.insert(f.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"1-3.weights.h5", "2-2.weights.h5", "3-1.weights.h5", "3-4.weights.h5"}));
}

TEST(ModelCheckpoint, DirectoryTargetIsAnIOError) {
  Model m = small_model();
  fs::path dir = temp_path("checkpoint_dir.keras");
  fs::create_directories(dir);
  ModelCheckpoint cb(dir.string());
  cb.set_model(&m);
  Logs l;
  EXPECT_THROW(cb.on_epoch_end(0, l), IOError);
}

}  // namespace
}  // namespace kerascpp::callbacks
