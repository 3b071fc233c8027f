// ReduceLROnPlateau's decision (detail::plateau_step) against real Keras 3 for the same logs: the
// learning rate after every epoch, the logged "learning_rate" and the messages. The optimizer is
// simulated by a float32 learning-rate variable, as Keras's is. The class itself reads
// model()->optimizer(), which needs Model::compile (src/training, not in this branch): its
// end-to-end test belongs with fit's tests.
#include <gtest/gtest.h>

#include "callbacks_fixture.h"
#include "kerascpp/error.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {
namespace {

using namespace kerascpp::testing;

TEST(ReduceLROnPlateau, DecisionMatchesKeras3) {
  int n = 0;
  for (const auto& c : callbacks_reference()["reduce_lr_on_plateau"]) {
    const Json& kw = c["kwargs"];
    SCOPED_TRACE(kw.dump());
    std::string monitor = kw.value("monitor", "val_loss");
    detail::PlateauSettings s;
    s.factor = kw.value("factor", 0.1);
    s.patience = kw.value("patience", 10);
    s.min_delta = kw.value("min_delta", 1e-4);
    s.cooldown = kw.value("cooldown", 0);
    s.min_lr = kw.value("min_lr", 0.0);
    s.greater = detail::monitor_greater("ReduceLROnPlateau", monitor, kw.value("mode", "auto"));
    int verbose = kw.value("verbose", 0);
    detail::PlateauState st;
    float lr_var = static_cast<float>(c["initial_lr"].get<double>());
    std::ostringstream out;
    for (size_t e = 0; e < c["logs"].size(); ++e) {
      Logs logs = logs_of(c["logs"][e]);
      double lr = lr_var;
      logs.set("learning_rate", lr);
      EXPECT_EQ(logs.at("learning_rate"), c["logged_lr"][e].get<double>()) << "epoch " << e;
      if (auto cur = logs.get(monitor)) {
        if (auto new_lr = detail::plateau_step(s, st, *cur, lr)) {
          lr_var = static_cast<float>(*new_lr);
          if (verbose > 0)
            out << "\nEpoch " << e + 1 << ": ReduceLROnPlateau reducing learning rate to "
                << detail::python_float_repr(*new_lr) << ".\n";
        }
      }
      EXPECT_EQ(static_cast<double>(lr_var), c["lr"][e].get<double>()) << "epoch " << e;
    }
    EXPECT_EQ(out.str(), c["stdout"].get<std::string>());
    ++n;
  }
  EXPECT_GE(n, 8);
}

TEST(ReduceLROnPlateau, ImprovementUsesMinDeltaTowardsBetter) {
  // Keras negates min_delta for "less": current + |d| < best.
  EXPECT_TRUE(detail::is_improvement(0.5, std::nullopt, false, 0.1));
  EXPECT_TRUE(detail::is_improvement(0.85, 1.0, false, 0.1));
  EXPECT_FALSE(detail::is_improvement(0.95, 1.0, false, 0.1));
  EXPECT_FALSE(detail::is_improvement(0.95, 1.0, false, -0.1));  // |min_delta|
  EXPECT_TRUE(detail::is_improvement(1.15, 1.0, true, 0.1));
  EXPECT_FALSE(detail::is_improvement(1.05, 1.0, true, 0.1));
  EXPECT_FALSE(detail::is_improvement(std::nan(""), 1.0, false, 0));
}

}  // namespace
}  // namespace kerascpp::callbacks
