// CSVLogger writes the bytes Keras 3's csv.DictWriter writes for the same logs: header, sorted
// keys, val_ columns, "NA", Python's float text, "\r\n", quoting, append without a second header.
#include <gtest/gtest.h>

#include <filesystem>

#include "callbacks_fixture.h"
#include "kerascpp/error.h"

namespace kerascpp::callbacks {
namespace {

using namespace kerascpp::testing;

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

TEST(CSVLogger, MatchesKeras3Bytes) {
  std::string path = temp_path("log.csv");
  int n = 0;
  for (const auto& c : callbacks_reference()["csv_logger"]) {
    SCOPED_TRACE(c["runs"].dump());
    std::filesystem::remove(path);
    for (const auto& run : c["runs"]) {
      CSVLogger cb(path, c["separator"].get<std::string>(), c["append"].get<bool>());
      Logs empty;
      cb.on_train_begin(empty);
      for (size_t e = 0; e < run.size(); ++e) {
        Logs l = logs_of(run[e]);
        cb.on_epoch_end(static_cast<int>(e), l);
        // Flushed per epoch: the row is on disk before training ends.
        EXPECT_NE(read_all(path).find("\r\n" + std::to_string(e)), std::string::npos);
      }
      cb.on_train_end(empty);
    }
    EXPECT_EQ(read_all(path), c["text"].get<std::string>());
    ++n;
  }
  EXPECT_GE(n, 4);
}

TEST(CSVLogger, UnwritablePathIsAnIOError) {
  CSVLogger cb("/nonexistent-dir/log.csv");
  Logs l;
  EXPECT_THROW(cb.on_train_begin(l), IOError);
}

}  // namespace
}  // namespace kerascpp::callbacks
