// Saving never costs the user the file they had: killed mid-save (SIGKILL at many moments), a full
// disk, an unwritable folder, a bad name or a folder as the target all leave the old file whole.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "../test_paths.h"
#include "kerascpp/model.h"

namespace kerascpp {
namespace {

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Two versions of one model that differ in every weight.
std::pair<Model, Model> two_versions() {
  Model a = load_model(testing::fixture("functional_2in_2out/keras3/model.keras"));
  Model b = load_model(testing::fixture("functional_2in_2out/keras3/model.keras"));
  auto w = b.get_weights();
  for (auto& t : w)
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] += 1.f;
  b.set_weights(w);
  return {std::move(a), std::move(b)};
}

bool weights_equal(const Model& x, const Model& y) {
  auto a = x.get_weights(), b = y.get_weights();
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].nbytes()) != 0) return false;
  return true;
}

TEST(AtomicSave, KilledWhileSavingLeavesOldOrNewModelWhole) {
  auto [a, b] = two_versions();
  std::mt19937 rng(7);
  for (const char* ext : {".keras", ".h5"}) {
    const std::string target = testing::temp_path(std::string("killed") + ext);
    a.save(target);
    int saw_a = 0, saw_b = 0;
    for (int round = 0; round < 40; ++round) {
      pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {  // the child saves B and A over the target until it is killed
        for (;;) {
          b.save(target);
          a.save(target);
        }
      }
      usleep(std::uniform_int_distribution<int>(0, 20000)(rng));
      kill(pid, SIGKILL);
      int status = 0;
      waitpid(pid, &status, 0);
      Model loaded = load_model(target);  // must not throw: the file is whole
      bool is_a = weights_equal(loaded, a), is_b = weights_equal(loaded, b);
      EXPECT_TRUE(is_a || is_b) << ext << " round " << round;
      saw_a += is_a;
      saw_b += is_b;
    }
    EXPECT_GT(saw_a + saw_b, 0);
    // Temporary files of killed saves stay behind (".killed.keras.tmp-XXXXXX"); remove them.
    for (const auto& e : std::filesystem::directory_iterator(KCPP_BINARY_DIR))
      if (e.path().filename().string().rfind(".test_tmp_killed", 0) == 0) std::filesystem::remove(e.path());
  }
}

TEST(AtomicSave, FullDiskLeavesOldFile) {
  auto [a, b] = two_versions();
  const std::string target = testing::temp_path("fulldisk.keras");
  a.save(target);
  const std::string before = bytes_of(target);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // a file size limit makes write() fail with EFBIG, as a full disk fails with ENOSPC
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{2048, 2048};
    setrlimit(RLIMIT_FSIZE, &lim);
    try {
      b.save(target);
    } catch (const IOError& e) {
      _exit(std::strstr(e.what(), target.c_str()) ? 0 : 2);
    } catch (...) {
      _exit(3);
    }
    _exit(4);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: message lacks the path, 3: wrong error type, 4: no error";
  EXPECT_EQ(bytes_of(target), before);
}

TEST(AtomicSave, BadTargetsGetClearErrorsAndChangeNothing) {
  auto [a, b] = two_versions();
  const std::string target = testing::temp_path("kept.keras");
  a.save(target);
  const std::string before = bytes_of(target);
  auto message = [&](const std::string& path) -> std::string {
    try {
      b.save(path);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message("/proc/self/model.keras").find("/proc/self/model.keras"), std::string::npos);  // unwritable
  EXPECT_NE(message("/nonexistent-folder/model.keras").find("does not exist"), std::string::npos);
  EXPECT_NE(message(testing::temp_path("model.pb")).find("extension"), std::string::npos);
  std::filesystem::create_directories(testing::temp_path("a_folder.keras"));
  EXPECT_NE(message(testing::temp_path("a_folder.keras")).find("directory"), std::string::npos);
  EXPECT_THROW(b.save_weights(testing::temp_path("weights.bin")), ValueError);
  EXPECT_THROW(b.save(testing::temp_path("k2.keras"), SaveOptions{KerasDialect::keras2}), ValueError);
  EXPECT_EQ(bytes_of(target), before);
}

}  // namespace
}  // namespace kerascpp
