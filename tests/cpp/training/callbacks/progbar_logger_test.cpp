// ProgbarLogger's text against Keras 3's for the same hooks and logs. Keras's clock was frozen
// (callbacks_reference.py): its durations read 0 and only the first and final updates of an
// epoch draw. Here the clock runs, so durations and the padding that depends on their width are
// normalised on both sides before comparing.
#include <gtest/gtest.h>

#include <regex>

#include "callbacks_fixture.h"

namespace kerascpp::callbacks {
namespace {

using namespace kerascpp::testing;

std::string normalise(std::string s) {
  s = std::regex_replace(s, std::regex(R"(\d+(us|ms|s)/step)"), "T/step");
  s = std::regex_replace(s, std::regex("(\x1b\\[1m)[0-9:]+s?(\x1b\\[0m)"), "$1T$2");
  s = std::regex_replace(s, std::regex(R"( - \d+s -)"), " - T -");
  s = std::regex_replace(s, std::regex("\b+"), "");
  s = std::regex_replace(s, std::regex(" +(?=[\r\n]|$)"), "");
  return s;
}

TEST(ProgbarLogger, MatchesKeras3Text) {
  int n = 0;
  for (const auto& c : callbacks_reference()["progbar"]) {
    SCOPED_TRACE("verbose " + c["verbose"].dump() + " epochs " + c["epochs"].dump());
    std::ostringstream os;
    ProgbarLogger cb(&os);
    cb.set_params({.epochs = c["epochs"].get<int>(), .steps = c["steps"].get<int64_t>(),
                   .verbose = c["verbose"].get<int>()});
    Logs empty;
    cb.on_train_begin(empty);
    for (int e = 0; e < c["epochs"].get<int>(); ++e) {
      cb.on_epoch_begin(e, empty);
      const auto& batches = c["batches"][e];
      for (size_t b = 0; b < batches.size(); ++b) {
        cb.on_train_batch_begin(static_cast<int64_t>(b), empty);
        Logs l = logs_of(batches[b]);
        cb.on_train_batch_end(static_cast<int64_t>(b), l);
      }
      // Validation inside fit draws nothing.
      Logs val;
      val.set("loss", 9.0);
      cb.on_test_begin(empty);
      cb.on_test_batch_end(0, val);
      cb.on_test_end(val);
      Logs l = logs_of(c["epoch_logs"][e]);
      cb.on_epoch_end(e, l);
    }
    cb.on_train_end(empty);
    EXPECT_EQ(normalise(os.str()), normalise(c["stdout"].get<std::string>())) << os.str();
    ++n;
  }
  EXPECT_GE(n, 4);
}

TEST(ProgbarLogger, EvaluateDrawsWithTheTestHooks) {
  const auto& c = callbacks_reference()["progbar_evaluate"];
  std::ostringstream os;
  ProgbarLogger cb(&os);
  cb.set_params({.epochs = 1, .steps = c["steps"].get<int64_t>(), .verbose = 1});
  Logs empty;
  cb.on_test_begin(empty);
  for (size_t b = 0; b < c["batches"].size(); ++b) {
    Logs l = logs_of(c["batches"][b]);
    cb.on_test_batch_end(static_cast<int64_t>(b), l);
  }
  Logs fin = logs_of(c["final"]);
  cb.on_test_end(fin);
  EXPECT_EQ(normalise(os.str()), normalise(c["stdout"].get<std::string>()));
}

// Per-batch updates are throttled to one draw per 50 ms: 100,000 batches print a handful of times.
TEST(ProgbarLogger, ThrottlesUpdates) {
  std::ostringstream os;
  ProgbarLogger cb(&os);
  cb.set_params({.epochs = 1, .steps = 100000, .verbose = 1});
  Logs empty, l;
  l.set("loss", 0.5);
  cb.on_train_begin(empty);
  cb.on_epoch_begin(0, empty);
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t b = 0; b < 100000; ++b) cb.on_train_batch_end(b, l);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  cb.on_epoch_end(0, l);
  std::string text = os.str();
  size_t draws = std::count(text.begin(), text.end(), '\r');
  EXPECT_LE(draws, 2 + static_cast<size_t>(s / 0.05) + 1);
  EXPECT_NE(text.find("100000/100000"), std::string::npos);
}

}  // namespace
}  // namespace kerascpp::callbacks
