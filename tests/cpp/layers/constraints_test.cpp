// keras.constraints (layers/constraints.h) on small weights against Keras's formulas worked by hand;
// their effect in training against Keras: FitParity's "constraints" case.
#include "layers/constraints.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../test_errors.h"
#include "kerascpp/model.h"

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

TEST(Constraints, AxesListsNegativeOrNoneOverAConvolutionKernel) {
  // (2, 1, 1, 2): Keras's advice for conv kernels, axis=[0, 1, 2], is one norm per filter (last axis).
  const Tensor w = Tensor::from_vector({2, 1, 1, 2}, {3, 1, 4, 2});  // filter 0: (3, 4), filter 1: (1, 2)
  const double e = 1e-7, n1 = std::sqrt(5.0);
  const std::vector<float> list = applied({{"class_name", "UnitNorm"}, {"config", {{"axis", {0, 1, 2}}}}}, w);
  const std::vector<float> negative = applied({{"class_name", "UnitNorm"}, {"config", {{"axis", {-4, -3, -2}}}}}, w);
  const double want[] = {3 / (5 + e), 1 / (n1 + e), 4 / (5 + e), 2 / (n1 + e)};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(list[i], want[i], 1e-6);
    EXPECT_NEAR(negative[i], want[i], 1e-6);
  }
  const std::vector<float> all = applied({{"class_name", "unitnorm"}, {"config", {{"axis", nullptr}}}}, w);  // tf_keras alias
  const double norm = std::sqrt(9.0 + 1 + 16 + 4);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(all[i], w.data<float>()[i] / (norm + e), 1e-6);
  EXPECT_FALSE(Constraint::from_config("Constraint", "t").active());  // Keras's base class: the identity
}

TEST(Constraints, OnlyTheWeightsTrainingUpdatesAreConstrained) {
  // A frozen layer's constraint never runs, as Keras's optimizer constrains what it updated.
  const Json c = {{"class_name", "Sequential"},
                  {"config",
                   {{"name", "s"},
                    {"layers",
                     {{{"class_name", "InputLayer"}, {"config", {{"name", "in"}, {"batch_shape", {nullptr, 2}}}}},
                      {{"class_name", "Dense"},
                       {"config",
                        {{"name", "frozen"}, {"units", 2}, {"trainable", false}, {"kernel_constraint", "non_neg"},
                         {"kernel_initializer", {{"class_name", "Constant"}, {"config", {{"value", -1.0}}}}}}}},
                      {{"class_name", "Dense"}, {"config", {{"name", "head"}, {"units", 1}, {"kernel_constraint", "non_neg"}}}}}}}}};
  Model m = model_from_json(c.dump());
  CompileOptions co;
  co.optimizer = "sgd", co.loss = "mse";
  m.compile(co);
  FitOptions o;
  o.verbose = 0;
  m.fit({Tensor::from_vector({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}, {Tensor::from_vector({4, 1}, {1, 2, 3, 4})}, o);
  const std::vector<Tensor> w = m.get_weights();  // frozen kernel, bias, head kernel, bias
  for (int64_t i = 0; i < w[0].size(); ++i) EXPECT_EQ(w[0].data<float>()[i], -1.f);
  for (int64_t i = 0; i < w[2].size(); ++i) EXPECT_GE(w[2].data<float>()[i], 0.f);
}

TEST(Constraints, KerasKeysAndErrors) {
  LayerPtr dense = make_layer("Dense", {{"name", "d"}, {"units", 2}});
  EXPECT_EQ(dense->weight_config_key("kernel", "constraint"), "kernel_constraint");
  EXPECT_EQ(dense->weight_config_key("recurrent_kernel", "regularizer"), "recurrent_regularizer");
  LayerPtr depthwise = make_layer("DepthwiseConv2D", {{"name", "dw"}, {"kernel_size", 3}});
  EXPECT_EQ(depthwise->weight_config_key("kernel", "constraint"), "depthwise_constraint");  // Keras's name
  EXPECT_NE(testing::error_of([] { Constraint::from_config("max_nrom", "layer 'd' (Dense)"); })
                .find("Could not interpret constraint identifier: \"max_nrom\" (layer 'd' (Dense))"),
            std::string::npos);
}

}  // namespace
}  // namespace kerascpp::layers
