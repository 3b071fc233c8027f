// unary (every elementwise Keras activation), unary_from_name and relu, against formulas written out
// here in long double from the Keras docstrings, and against the reference kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/ref/ref.h"
#include "op_test_util.h"
#include "ops/ops.h"

namespace kerascpp::ops {
namespace {

using LD = long double;

// Keras 3 docstring formulas, in the plainest form (no stability tricks: long double has the range).
double formula(UnaryOp op, LD x, LD alpha) {
  const LD pi = 3.14159265358979323846264338327950288L;
  auto sigmoid = [](LD v) { return 1 / (1 + std::exp(-v)); };
  auto softplus = [](LD v) { return std::log(1 + std::exp(v)); };
  switch (op) {
    case UnaryOp::linear:
      return x;
    case UnaryOp::relu:
      return x > 0 ? x : 0;
    case UnaryOp::relu6:
      return std::min<LD>(std::max<LD>(x, 0), 6);
    case UnaryOp::sigmoid:
      return sigmoid(x);
    case UnaryOp::tanh:
      return std::tanh(x);
    case UnaryOp::elu:
      return x > 0 ? x : alpha * (std::exp(x) - 1);
    case UnaryOp::selu: {
      const LD a = 1.6732632423543772848170429916717L, s = 1.0507009873554804934193349852946L;
      return x > 0 ? s * x : s * a * (std::exp(x) - 1);
    }
    case UnaryOp::softplus:
      return softplus(x);
    case UnaryOp::softsign:
      return x / (std::fabs(x) + 1);
    case UnaryOp::silu:
      return x * sigmoid(x);
    case UnaryOp::gelu:
      return 0.5L * x * (1 + std::erf(x / std::sqrt(2.0L)));
    case UnaryOp::gelu_approximate:
      return 0.5L * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715L * x * x * x)));
    case UnaryOp::hard_sigmoid:
      return x <= -3 ? 0 : x >= 3 ? 1 : x / 6 + 0.5L;
    case UnaryOp::hard_sigmoid_k2:
      return x < -2.5L ? 0 : x > 2.5L ? 1 : 0.2L * x + 0.5L;
    case UnaryOp::hard_silu:
      return x < -3 ? 0 : x > 3 ? x : x * (x + 3) / 6;
    case UnaryOp::exponential:
      return std::exp(x);
    case UnaryOp::mish:
      return x * std::tanh(softplus(x));
    case UnaryOp::leaky_relu:
      return x >= 0 ? x : alpha * x;
    case UnaryOp::sqrt:
      return std::sqrt(x);
    case UnaryOp::square:
      return x * x;
    case UnaryOp::abs:
      return std::fabs(x);
    case UnaryOp::exp:
      return std::exp(x);
    case UnaryOp::log:
      return std::log(x);
  }
  return 0;
}

TEST(Unary, EveryOpMatchesFormulaAndRef) {
  std::mt19937 g(300);
  Tensor x = test::random_tensor(g, {40, 50}, -10.f, 10.f);
  // Kinks and crossings: 0, +-3 (hard_sigmoid), +-2.5 (Keras 2), 6 (relu6).
  const float special[] = {0.f, 3.f, -3.f, 2.5f, -2.5f, 6.f, -6.f, 1e-6f, -1e-6f, 30.f, -30.f};
  std::copy(std::begin(special), std::end(special), x.data<float>());
  for (const UnaryOp op : kernels::kAllUnary) {
    const bool positive_only = op == UnaryOp::sqrt || op == UnaryOp::log;
    Tensor in = positive_only ? unary(UnaryOp::abs, x) : x;
    for (float alpha : {0.3f, 1.f}) {
      Tensor y = unary(op, in, alpha);
      std::vector<double> want(in.size()), r(in.size());
      std::vector<float> rf(in.size());
      kernels::ref::unary(op, in.data<float>(), rf.data(), in.size(), alpha);
      for (int64_t i = 0; i < in.size(); ++i) {
        want[i] = formula(op, in.data<float>()[i], alpha);
        r[i] = rf[i];
      }
      const std::string name(unary_name(op));
      test::expect_close(y, in.shape(), want, 1e-7, 5e-6, name + " vs formula");
      test::expect_close(y, in.shape(), r, 1e-7, 5e-6, name + " vs ref");
    }
  }
}

TEST(Unary, SizesZeroAndOneAndScalars) {
  for (const Shape& s : {Shape{}, Shape{0}, Shape{1}, Shape{3, 0, 2}}) {
    Tensor x = Tensor::zeros(s);
    for (const UnaryOp op : kernels::kAllUnary) EXPECT_EQ(unary(op, x).shape(), s);
  }
}

// A name looked up from a config, applied without alpha, computes what Keras computes.
TEST(Unary, DefaultAlphaIsTheKerasDefault) {
  Tensor x = Tensor::from_vector({2}, {-1.f, 2.f});
  EXPECT_FLOAT_EQ(unary(UnaryOp::leaky_relu, x).data<float>()[0], -0.2f);
  EXPECT_FLOAT_EQ(unary(UnaryOp::elu, x).data<float>()[0], std::expm1(-1.f));
  EXPECT_FLOAT_EQ(unary(UnaryOp::leaky_relu, x, 0.3f).data<float>()[0], -0.3f);
  EXPECT_FLOAT_EQ(unary(UnaryOp::elu, x, 0.5f).data<float>()[0], 0.5f * std::expm1(-1.f));
}

TEST(Unary, RejectsNonFloat) {
  std::string msg = test::value_error([] { unary(UnaryOp::sigmoid, test::int_tensor({3})); });
  EXPECT_TRUE(test::contains(msg, "sigmoid") && test::contains(msg, "int32")) << msg;
  EXPECT_THROW(unary(UnaryOp::relu, Tensor()), ValueError);
}

TEST(UnaryFromName, EveryKerasActivationName) {
  const std::pair<const char*, UnaryOp> names[] = {{"linear", UnaryOp::linear},
                                                   {"relu", UnaryOp::relu},
                                                   {"relu6", UnaryOp::relu6},
                                                   {"sigmoid", UnaryOp::sigmoid},
                                                   {"tanh", UnaryOp::tanh},
                                                   {"elu", UnaryOp::elu},
                                                   {"selu", UnaryOp::selu},
                                                   {"softplus", UnaryOp::softplus},
                                                   {"softsign", UnaryOp::softsign},
                                                   {"swish", UnaryOp::silu},
                                                   {"silu", UnaryOp::silu},
                                                   {"gelu", UnaryOp::gelu},
                                                   {"hard_sigmoid", UnaryOp::hard_sigmoid},
                                                   {"hard_silu", UnaryOp::hard_silu},
                                                   {"hard_swish", UnaryOp::hard_silu},
                                                   {"exponential", UnaryOp::exponential},
                                                   {"mish", UnaryOp::mish},
                                                   {"leaky_relu", UnaryOp::leaky_relu}};
  for (const auto& [name, want] : names) {
    UnaryOp op = UnaryOp::log;
    ASSERT_TRUE(unary_from_name(name, &op)) << name;
    EXPECT_EQ(op, want) << name;
  }
  UnaryOp op;
  for (const char* name : {"softmax", "log_softmax", "Relu", "", "gelu_approximate", "unknown"})
    EXPECT_FALSE(unary_from_name(name, &op)) << name;
}

// The examples in the docstrings of keras.activations.relu and keras.layers.ReLU.
TEST(Relu, KerasDocstringExamples) {
  auto run = [](std::vector<float> x, float slope, float max_value, float threshold) {
    Tensor y = relu(Tensor::from_vector({static_cast<int64_t>(x.size())}, x), slope, max_value, threshold);
    return std::vector<float>(y.data<float>(), y.data<float>() + y.size());
  };
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {-10, -5, 0, 5, 10};
  EXPECT_EQ(run(x, 0, inf, 0), (std::vector<float>{0, 0, 0, 5, 10}));
  EXPECT_EQ(run(x, 0.5f, inf, 0), (std::vector<float>{-5, -2.5f, 0, 5, 10}));
  EXPECT_EQ(run(x, 0, 5, 0), (std::vector<float>{0, 0, 0, 5, 5}));
  EXPECT_EQ(run(x, 0, inf, 5), (std::vector<float>{0, 0, 0, 0, 10}));
  EXPECT_EQ(run(x, 0.5f, 10, 0), (std::vector<float>{-5, -2.5f, 0, 5, 10}));
  EXPECT_EQ(run({-3, -1, 0, 2}, 0, 1, 0), (std::vector<float>{0, 0, 0, 1}));
  EXPECT_EQ(run({-3, -1, 0, 2}, 1, inf, 0), (std::vector<float>{-3, -1, 0, 2}));
  EXPECT_EQ(run({-3, -1, 1, 2}, 0, inf, 1.5f), (std::vector<float>{0, 0, 0, 2}));
}

// keras.layers.ReLU's formula, for the arguments the layer accepts (all >= 0), away from the
// threshold itself: max_value at or above it, x from threshold up, negative_slope * (x - threshold) below.
TEST(Relu, RandomInputsMatchFormulaAndRef) {
  std::mt19937 g(301);
  Tensor x = test::random_tensor(g, {7, 31}, -10.f, 10.f);
  const float inf = std::numeric_limits<float>::infinity();
  for (float slope : {0.f, 0.1f, 1.f})
    for (float max_value : {inf, 6.f, 2.f})
      for (float threshold : {0.f, 0.5f, 1.5f}) {
        Tensor y = relu(x, slope, max_value, threshold);
        std::vector<double> want(x.size()), r(x.size());
        std::vector<float> rf(x.size());
        kernels::ref::relu(x.data<float>(), rf.data(), x.size(), slope, max_value, threshold);
        for (int64_t i = 0; i < x.size(); ++i) {
          double v = x.data<float>()[i];
          want[i] = v >= max_value ? max_value : v >= threshold ? v : double(slope) * (v - threshold);
          r[i] = rf[i];
        }
        test::expect_close(y, x.shape(), want, 1e-6, 1e-6, "relu formula");
        test::expect_close(y, x.shape(), r, 0, 1e-7, "relu ref");
      }
  EXPECT_THROW(relu(test::int_tensor({2})), ValueError);
  EXPECT_THROW(relu(Tensor::zeros({2}), NAN), ValueError);
}

}  // namespace
}  // namespace kerascpp::ops
