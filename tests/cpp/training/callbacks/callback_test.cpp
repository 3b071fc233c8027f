// Logs, the monitor direction in mode "auto", History, LambdaCallback and TerminateOnNaN.
#include <gtest/gtest.h>

#include "callbacks_fixture.h"
#include "kerascpp/error.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {
namespace {

using namespace kerascpp::testing;

TEST(Logs, KeepsInsertionOrderAndReplacesInPlace) {
  Logs l;
  EXPECT_TRUE(l.empty());
  l.set("loss", 1.0);
  l.set("accuracy", 0.5);
  l.set("loss", 0.5);
  ASSERT_EQ(l.items().size(), 2u);
  EXPECT_EQ(l.items()[0].first, "loss");
  EXPECT_EQ(l.at("loss"), 0.5);
  EXPECT_FALSE(l.contains("val_loss"));
  EXPECT_FALSE(l.get("val_loss").has_value());
  try {
    l.at("val_loss");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("loss,accuracy"), std::string::npos) << e.what();
  }
}

// An array log (Precision with several thresholds): its mean in items(), its values in array(), kept
// as an array through set_all and sort_keys, replaced by a number on set(), and refused by get().
TEST(Logs, HoldArraysThatNoCallbackCanMonitor) {
  Logs l;
  l.set("loss", 1.0);
  l.set_array("precision", {0.25, 0.75});
  ASSERT_EQ(l.items().size(), 2u);
  EXPECT_EQ(l.items()[1].second, 0.5);
  ASSERT_NE(l.array("precision"), nullptr);
  EXPECT_EQ(*l.array("precision"), (std::vector<double>{0.25, 0.75}));
  EXPECT_EQ(l.array("loss"), nullptr);
  EXPECT_TRUE(l.contains("precision"));
  try {
    l.get("precision");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("\"precision\" is an array of 2 values"), std::string::npos) << e.what();
  }
  Logs all;
  all.set("x", 3);
  all.set_all(l, "val_");
  all.sort_keys();
  EXPECT_EQ(all.items()[0].first, "val_loss");
  EXPECT_EQ(all.items()[2].first, "x");
  ASSERT_NE(all.array("val_precision"), nullptr);
  EXPECT_EQ(all.array("val_precision")->size(), 2u);
  History h;
  h.on_epoch_end(0, all);
  EXPECT_EQ(h.array_history["val_precision"], (std::vector<std::vector<double>>{{0.25, 0.75}}));
  EXPECT_EQ(h.history.count("val_precision"), 0u);
  all.set("val_precision", 1.0);  // a number again
  EXPECT_EQ(all.array("val_precision"), nullptr);
  EXPECT_EQ(all.at("val_precision"), 1.0);
}

// Keras 3 takes the direction from the compiled metric objects; kerascpp from their names. Every
// name the reference compiled must get Keras's answer.
TEST(MonitorDirection, AutoModeMatchesKeras3) {
  int n = 0;
  for (auto it = callbacks_reference()["monitor_direction"].begin();
       it != callbacks_reference()["monitor_direction"].end(); ++it) {
    std::string name = it.key(), want = it.value();
    SCOPED_TRACE(name);
    if (want.rfind("error: ", 0) == 0) {
      try {
        detail::monitor_greater("EarlyStopping", name, "auto");
        ADD_FAILURE() << "no error";
      } catch (const ValueError& e) {
        EXPECT_EQ(e.what(), want.substr(7));
      }
    } else {
      EXPECT_EQ(detail::monitor_greater("EarlyStopping", name, "auto"), want == "up");
    }
    ++n;
  }
  EXPECT_GT(n, 40);
  EXPECT_TRUE(detail::monitor_greater("X", "loss", "max"));
  EXPECT_FALSE(detail::monitor_greater("X", "accuracy", "min"));
  bool warned = false;
  Capture err(std::cerr);
  EXPECT_EQ(detail::checked_mode("EarlyStopping", "sideways", warned), "auto");
  EXPECT_EQ(err.text(), "UserWarning: EarlyStopping mode 'sideways' is unknown, fallback to auto mode.\n");
}

TEST(History, RecordsEveryEpochAndKeepsHistoryAcrossFits) {
  History h;
  Logs empty;
  for (int fit = 0; fit < 2; ++fit) {
    h.on_train_begin(empty);
    for (int e = 0; e < 3; ++e) {
      Logs l;
      l.set("loss", e);
      if (e > 0) l.set("val_loss", 10 + e);
      h.on_epoch_end(e, l);
    }
  }
  EXPECT_EQ(h.epoch, (std::vector<int>{0, 1, 2}));  // Keras 3 resets only `epoch`
  EXPECT_EQ(h.history["loss"], (std::vector<double>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(h.history["val_loss"], (std::vector<double>{11, 12, 11, 12}));
}

TEST(LambdaCallback, CallsTheGivenHooksOnly) {
  LambdaCallback cb;
  std::vector<std::string> calls;
  cb.on_epoch_end_fn = [&](int e, Logs& l) { calls.push_back("epoch_end " + std::to_string(e)); };
  cb.on_batch_begin_fn = [&](int64_t b, Logs&) { calls.push_back("batch_begin " + std::to_string(b)); };
  cb.on_train_end_fn = [&](Logs& l) { l.set("x", 1); calls.push_back("train_end"); };
  Logs l;
  cb.on_train_begin(l);
  cb.on_epoch_begin(0, l);
  cb.on_train_batch_begin(7, l);
  cb.on_train_batch_end(7, l);
  cb.on_epoch_end(0, l);
  cb.on_train_end(l);
  EXPECT_EQ(calls, (std::vector<std::string>{"batch_begin 7", "epoch_end 0", "train_end"}));
  EXPECT_TRUE(l.contains("x"));
}

TEST(TerminateOnNaN, StopsOnNanOrInfWithKerasMessage) {
  const auto& ref = callbacks_reference()["terminate_on_nan"];
  Model m = small_model();
  TerminateOnNaN cb;
  cb.set_model(&m);
  std::string out;
  {
    Capture c;
    for (size_t b = 0; b < ref["losses"].size(); ++b) {
      m.stop_training = false;
      Logs l;
      l.set("loss", std::stod(ref["losses"][b].get<std::string>()));
      cb.on_train_batch_end(static_cast<int64_t>(b), l);
      EXPECT_EQ(m.stop_training, ref["stops"][b].get<bool>()) << b;
    }
    out = c.text();
  }
  EXPECT_EQ(out, ref["stdout"].get<std::string>());
  Logs no_loss;
  m.stop_training = false;
  cb.on_train_batch_end(0, no_loss);
  EXPECT_FALSE(m.stop_training);
}

}  // namespace
}  // namespace kerascpp::callbacks
