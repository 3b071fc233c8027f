// keras.constraints (layers/constraints.h) on small weights against Keras's formulas worked by hand;
// their effect in training against Keras: FitParity's "constraints" case.
#include "layers/constraints.h"

#include <gtest/gtest.h>

#include "../test_errors.h"

namespace kerascpp::layers {
namespace {

std::vector<float> applied(const Json& c, const Tensor& w) {
  const Tensor out = Constraint::from_config(c, "layer 't' (Test)").apply(w);
  return std::vector<float>(out.data<float>(), out.data<float>() + out.size());
}

TEST(Constraints, ProjectAsKerasFormulasDo) {
  // (2, 2): columns (3, 4) and (0, 0.5); norms over axis 0 (per column): 5 and 0.5.
  const Tensor w = Tensor::from_vector({2, 2}, {3, 0, 4, 0.5f});
  const double e = 1e-7;
  auto near = [](const std::vector<float>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  };
  near(applied({{"class_name", "MaxNorm"}, {"config", {{"max_value", 2.0}}}}, w),
       {3 * 2 / (5 + e), 0, 4 * 2 / (5 + e), 0.5 * 0.5 / (0.5 + e)});
  near(applied("unit_norm", w), {3 / (5 + e), 0, 4 / (5 + e), 0.5 / (0.5 + e)});
  // MinMaxNorm(1, 2, rate 0.5): desired = 0.5 clip(norm, 1, 2) + 0.5 norm: 3.5 and 0.75.
  near(applied({{"class_name", "MinMaxNorm"}, {"config", {{"min_value", 1.0}, {"max_value", 2.0}, {"rate", 0.5}}}}, w),
       {3 * 3.5 / (5 + e), 0, 4 * 3.5 / (5 + e), 0.5 * 0.75 / (0.5 + e)});
  // axis=1: per row, norms 3 and sqrt(16.25).
  near(applied({{"class_name", "UnitNorm"}, {"config", {{"axis", 1}}}}, w),
       {3 / (3 + e), 0, 4 / (std::sqrt(16.25) + e), 0.5 / (std::sqrt(16.25) + e)});
  near(applied("NonNeg", Tensor::from_vector({3}, {-1, 0, 2})), {0, 0, 2});
  EXPECT_FALSE(Constraint::from_config(Json(), "t").active());
}

TEST(Constraints, KerasKeysAndErrors) {
  EXPECT_EQ(weight_option_key("kernel", "constraint"), "kernel_constraint");
  EXPECT_EQ(weight_option_key("recurrent_kernel", "regularizer"), "recurrent_regularizer");
  EXPECT_EQ(weight_option_key("depthwise_kernel", "constraint"), "depthwise_constraint");
  EXPECT_NE(testing::error_of([] { Constraint::from_config("max_nrom", "layer 'd' (Dense)"); })
                .find("Could not interpret constraint identifier: \"max_nrom\" (layer 'd' (Dense))"),
            std::string::npos);
}

}  // namespace
}  // namespace kerascpp::layers
