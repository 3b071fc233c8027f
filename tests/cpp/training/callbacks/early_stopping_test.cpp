// EarlyStopping fed the logs that real Keras 3 was fed (callbacks_reference.py): same epochs run,
// stopped epoch, restored weights, messages and warnings.
#include <gtest/gtest.h>

#include "callbacks_fixture.h"
#include "kerascpp/error.h"

namespace kerascpp::callbacks {
namespace {

using namespace kerascpp::testing;

TEST(EarlyStopping, MatchesKeras3) {
  Model m = small_model();
  int n = 0;
  for (const auto& c : callbacks_reference()["early_stopping"]) {
    SCOPED_TRACE(c["kwargs"].dump() + " " + c["logs"].dump());
    EarlyStopping cb(c["kwargs"]);
    cb.set_model(&m);
    m.stop_training = false;
    Logs empty;
    if (c.contains("error")) {
      cb.on_train_begin(empty);
      try {
        Logs l = logs_of(c["logs"][0]);
        cb.on_epoch_end(0, l);
        ADD_FAILURE() << "no error";
      } catch (const ValueError& e) {
        EXPECT_EQ(e.what(), c["error"].get<std::string>());
      }
      continue;
    }
    int run = 0;
    std::string out, err;
    {
      Capture cout_capture(std::cout), cerr_capture(std::cerr);
      cb.on_train_begin(empty);
      for (size_t e = 0; e < c["logs"].size(); ++e) {
        cb.on_epoch_begin(static_cast<int>(e), empty);
        fill_weights(m, static_cast<float>(e));
        Logs l = logs_of(c["logs"][e]);
        cb.on_epoch_end(static_cast<int>(e), l);
        ++run;
        if (m.stop_training) break;
      }
      cb.on_train_end(empty);
      out = cout_capture.text(), err = cerr_capture.text();
    }
    EXPECT_EQ(run, c["epochs_run"].get<int>());
    EXPECT_EQ(cb.stopped_epoch(), c["stopped_epoch"].get<int>());
    EXPECT_EQ(m.get_weights()[0].data<float>()[0], c["weights_epoch"].get<float>());
    EXPECT_EQ(out, c["stdout"].get<std::string>());
    // Python shows a warning per epoch here (simplefilter "always"); kerascpp once per callback.
    if (c["warnings"].empty())
      EXPECT_EQ(err, "");
    else
      EXPECT_EQ(err, "UserWarning: " + c["warnings"][0].get<std::string>() + "\n");
    ++n;
  }
  EXPECT_GE(n, 17);
}

TEST(EarlyStopping, ReusableAcrossFits) {
  Model m = small_model();
  EarlyStopping cb(Json{{"monitor", "loss"}, {"patience", 1}});
  cb.set_model(&m);
  Logs empty;
  for (int fit = 0; fit < 2; ++fit) {
    m.stop_training = false;
    cb.on_train_begin(empty);
    int e = 0;
    for (double v : {1.0, 2.0, 3.0, 4.0}) {
      Logs l;
      l.set("loss", v);
      cb.on_epoch_end(e, l);
      if (m.stop_training) break;
      ++e;
    }
    EXPECT_EQ(cb.stopped_epoch(), 1) << "fit " << fit;
  }
}

TEST(EarlyStopping, RejectsUnknownKeywordArguments) {
  try {
    EarlyStopping cb(Json{{"patience", 2}, {"patiense", 3}, {"min_delt", 0.1}});
    FAIL();
  } catch (const ValueError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("min_delt, patiense"), std::string::npos) << msg;
    EXPECT_NE(msg.find("EarlyStopping"), std::string::npos) << msg;
  }
  EXPECT_THROW(EarlyStopping(Json{{"patience", "3"}}), ValueError);
}

}  // namespace
}  // namespace kerascpp::callbacks
