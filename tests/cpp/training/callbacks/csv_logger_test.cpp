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

// An array log as Keras's handle_value writes it: "[...]" of numpy float32 str() values, CSV-quoted
// (the bytes come from a Keras 3 fit with Precision(thresholds=[0.3, 0.5, 0.7])).
TEST(CSVLogger, WritesArrayLogsAsKeras) {
  std::string path = temp_path("arrays.csv");
  std::filesystem::remove(path);
  CSVLogger cb(path, ",", false);
  Logs empty, l;
  cb.on_train_begin(empty);
  l.set("loss", 0.5);
  l.set_array("precision", {0.45714285714285713, 0.5, 1.0 / 3.0});
  l.set_array("tp", {1.4e6, 1e-4, 0.00012, 5e-5, 123456.0, 0.0});  // numpy's switch to scientific
  cb.on_epoch_end(0, l);
  cb.on_train_end(empty);
  EXPECT_EQ(read_all(path), "epoch,loss,precision,tp,val_loss,val_precision,val_tp\r\n"
                            "0,0.5,\"\"\"[0.45714286, 0.5, 0.33333334]\"\"\","
                            "\"\"\"[1.4e+06, 1e-04, 0.00012, 5e-05, 123456.0, 0.0]\"\"\",NA,NA,NA\r\n");
}

}  // namespace
}  // namespace kerascpp::callbacks
