// The warning sink: std::cerr by default in Python's format, replaceable, restorable, safe from threads.
#include "kerascpp/warnings.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace kerascpp {
namespace {

TEST(Warnings, DefaultGoesToStderrAsPythonPrintsAUserWarning) {
  testing::internal::CaptureStderr();
  warn("Skipping loading optimizer state");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "UserWarning: Skipping loading optimizer state\n");
}

TEST(Warnings, ASinkReceivesEveryWarningAndTheOldOneComesBack) {
  std::vector<std::string> got;
  WarningSink previous = set_warning_sink([&](const std::string& m) { got.push_back(m); });
  EXPECT_FALSE(previous);  // the default
  warn("a");
  warn("b");
  WarningSink mine = set_warning_sink(previous);
  ASSERT_TRUE(mine);
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b"}));
  testing::internal::CaptureStderr();
  warn("c");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "UserWarning: c\n");
  EXPECT_EQ(got.size(), 2u);
}

TEST(Warnings, ASinkMayWarnAgainAndThrow) {
  int depth = 0;
  set_warning_sink([&](const std::string& m) {
    if (++depth < 3) warn(m + "!");  // no lock held while the sink runs
    if (m == "stop!!") throw std::runtime_error("as a Python filter set to 'error' does");
  });
  EXPECT_THROW(warn("stop"), std::runtime_error);
  EXPECT_EQ(depth, 3);
  set_warning_sink(nullptr);
}

TEST(Warnings, ManyThreadsWarnWhileTheSinkIsSwapped) {
  std::atomic<int> first{0}, second{0};
  set_warning_sink([&](const std::string&) { ++first; });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 1000; ++i) warn("w");
    });
  set_warning_sink([&](const std::string&) { ++second; });
  for (auto& t : threads) t.join();
  set_warning_sink(nullptr);
  EXPECT_EQ(first + second, 4000);
}

}  // namespace
}  // namespace kerascpp
