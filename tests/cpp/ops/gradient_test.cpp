// Every op's backward against central finite differences (check_gradients), one line per case.
// Inputs are drawn away from the kinks of relu, abs, max... so that a step of epsilon never crosses
// one; the tolerance allows for float32 forward passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kerascpp/autodiff.h"
#include "ops/ops.h"
#include "op_test_util.h"

namespace kerascpp {
namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// Uniform in +-[0.2, 1.2]: never within a finite-difference step of 0.
Tensor away_from_zero(std::mt19937& g, const Shape& shape) {
  Tensor t = test::random_tensor(g, shape, 0.2f, 1.2f);
  std::bernoulli_distribution sign(0.5);
  for (int64_t i = 0; i < t.size(); ++i)
    if (sign(g)) t.data<float>()[i] = -t.data<float>()[i];
  return t;
}

// Distinct values (a shuffled ramp with gaps of 0.05), for max and max pooling.
Tensor distinct(std::mt19937& g, const Shape& shape, float start = -1.f) {
  Tensor t = Tensor::empty(shape);
  std::vector<float> v(t.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + 0.05f * static_cast<float>(i);
  std::shuffle(v.begin(), v.end(), g);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

void expect_gradients(const char* what, const Fn& f, const std::vector<Tensor>& inputs, double eps = 1e-2,
                      double tol = 1e-2) {
  GradientCheck c = check_gradients(f, inputs, eps);
  EXPECT_LE(c.max_error, tol) << what << ": " << c.worst;
}

TEST(OpGradients, Elementwise) {
  std::mt19937 g(1);
  Tensor a = away_from_zero(g, {3, 4}), b = away_from_zero(g, {4}), c = away_from_zero(g, {3, 1});
  Tensor d = distinct(g, {3, 4}), e = distinct(g, {4}, -0.975f);
  for (ops::BinaryOp op : kernels::kAllBinary) {
    const std::string name(ops::binary_name(op));
    auto f = [op](auto& x) { return ops::binary(op, x[0], x[1]); };
    if (op == ops::BinaryOp::maximum || op == ops::BinaryOp::minimum) {  // away from ties
      expect_gradients(name.c_str(), f, {d, e}, 1e-3);
      continue;
    }
    expect_gradients((name + " a,b").c_str(), f, {a, b});
    expect_gradients((name + " a,c").c_str(), f, {a, c});
  }
  expect_gradients("prelu", [](auto& x) { return ops::prelu(x[0], x[1]); }, {a, b});
  expect_gradients("scale_shift", [](auto& x) { return ops::scale_shift(x[0], 1.5f, 2.f); }, {a});
}

TEST(OpGradients, EveryUnaryOp) {
  std::mt19937 g(2);
  using U = ops::UnaryOp;
  for (U op : kernels::kAllUnary) {
    // sqrt and log at positive inputs; the others away from their kinks.
    Tensor x = op == U::sqrt || op == U::log ? test::random_tensor(g, {2, 5}, 0.5f, 2.f) : away_from_zero(g, {2, 5});
    expect_gradients(ops::unary_name(op).data(), [op](auto& v) { return ops::unary(op, v[0]); }, {x});
  }
  Tensor x = away_from_zero(g, {2, 5});
  expect_gradients("relu(0.1, 0.9, 0.5)", [](auto& v) { return ops::relu(v[0], 0.1f, 0.9f, 0.5f); }, {x}, 1e-3);
}

TEST(OpGradients, LinearAlgebra) {
  std::mt19937 g(3);
  expect_gradients("matmul", [](auto& x) { return ops::matmul(x[0], x[1]); },
                   {test::random_tensor(g, {2, 3, 4}), test::random_tensor(g, {4, 5})});
  expect_gradients("matmul vector", [](auto& x) { return ops::matmul(x[0], x[1]); },
                   {test::random_tensor(g, {4}), test::random_tensor(g, {4, 2})});
  expect_gradients("batch_matmul", [](auto& x) { return ops::batch_matmul(x[0], x[1]); },
                   {test::random_tensor(g, {2, 3, 4}), test::random_tensor(g, {2, 4, 5})});
  expect_gradients("batch_matmul broadcast", [](auto& x) { return ops::batch_matmul(x[0], x[1]); },
                   {test::random_tensor(g, {2, 1, 3, 4}), test::random_tensor(g, {3, 4, 2})});
  expect_gradients("bias_add", [](auto& x) { return ops::bias_add(x[0], x[1]); },
                   {test::random_tensor(g, {2, 3, 4}), test::random_tensor(g, {4})});
}

TEST(OpGradients, Reductions) {
  std::mt19937 g(4);
  Tensor x = test::random_tensor(g, {2, 3, 4});
  for (int axis : {0, 1, -1}) {
    expect_gradients("softmax", [axis](auto& v) { return ops::softmax(v[0], axis); }, {x});
    expect_gradients("log_softmax", [axis](auto& v) { return ops::log_softmax(v[0], axis); }, {x});
    expect_gradients("l2_normalize", [axis](auto& v) { return ops::l2_normalize(v[0], axis); }, {x});
    expect_gradients("sum", [axis](auto& v) { return ops::sum(v[0], axis); }, {x});
  }
  expect_gradients("l2_normalize axes", [](auto& v) { return ops::l2_normalize(v[0], std::vector<int>{0, 2}); }, {x});
  expect_gradients("reduce_mean", [](auto& v) { return ops::reduce_mean(v[0], {0, 2}); }, {x});
  expect_gradients("reduce_mean keepdims", [](auto& v) { return ops::reduce_mean(v[0], {1}, true); }, {x});
  expect_gradients("reduce_max", [](auto& v) { return ops::reduce_max(v[0], {1, 2}); }, {distinct(g, {2, 3, 4})}, 1e-3);
  // tf.nn.moments: the variance about the batch mean, as BatchNormalization takes them in training
  // (the mean held constant inside variance loses nothing: its gradient there is zero).
  for (std::vector<int> axes : {std::vector<int>{0, 1}, {0, 2}, {1}, {-1, 0}}) {
    expect_gradients("variance about the mean",
                     [axes](auto& v) { return ops::variance(v[0], ops::reduce_mean(v[0], axes), axes); }, {x});
    expect_gradients("variance about the mean, kept dims",
                     [axes](auto& v) { return ops::variance(v[0], ops::reduce_mean(v[0], axes, true), axes); }, {x});
  }
}

// ops::variance computes what subtract, square and reduce_mean did, bit for bit, and names a mean of
// the wrong shape (one of as many values laid out otherwise included).
TEST(OpGradients, VarianceIsTheComposedForward) {
  std::mt19937 g(9);
  Tensor x = test::random_tensor(g, {5, 4, 7});
  const std::vector<int> axes = {0, 1};
  const Tensor mean = ops::reduce_mean(x, axes);
  const Tensor want = ops::reduce_mean(
      ops::unary(ops::UnaryOp::square, ops::binary(ops::BinaryOp::subtract, x, mean.reshape({1, 1, 7}))), axes);
  test::expect_close(ops::variance(x, mean, axes), want.shape(),
                     std::vector<double>(want.data<float>(), want.data<float>() + want.size()), 0, 0, "variance");
  try {
    (void)ops::variance(x, test::random_tensor(g, {4}), axes);
    ADD_FAILURE() << "a mean of 4 values for 7 channels was taken";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("Expected a mean of shape (7,) or (1, 1, 7)"), std::string::npos) << e.what();
  }
  try {
    (void)ops::variance(x, test::random_tensor(g, {7, 1}), axes);
    ADD_FAILURE() << "a mean of shape (7, 1) was taken";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("Expected a mean of shape (7,) or (1, 1, 7)"), std::string::npos) << e.what();
  }
}

TEST(OpGradients, Normalization) {
  std::mt19937 g(5);
  Tensor x = test::random_tensor(g, {3, 4, 6});
  Tensor mean = test::random_tensor(g, {4}), var = test::random_tensor(g, {4}, 0.5f, 1.5f);
  Tensor off = test::random_tensor(g, {4}), sc = test::random_tensor(g, {4});
  expect_gradients("batch_normalization",
                   [](auto& v) { return ops::batch_normalization(v[0], v[1], v[2], v[3], v[4], 1, 1e-3f); },
                   {x, mean, var, off, sc});
  Tensor gamma = test::random_tensor(g, {6}), beta = test::random_tensor(g, {6});
  expect_gradients("layer_normalization",
                   [](auto& v) { return ops::layer_normalization(v[0], v[1], v[2], {-1}, 1e-3f); }, {x, gamma, beta});
  expect_gradients("layer_normalization rms",
                   [](auto& v) { return ops::layer_normalization(v[0], v[1], Tensor(), {-1}, 1e-3f, true); },
                   {x, gamma});
  Tensor g24 = test::random_tensor(g, {24});
  expect_gradients("layer_normalization axes 1,2",
                   [](auto& v) { return ops::layer_normalization(v[0], v[1], Tensor(), {1, 2}, 1e-3f); }, {x, g24});
  Tensor g12 = test::random_tensor(g, {18});
  expect_gradients("layer_normalization axes 0,2",
                   [](auto& v) { return ops::layer_normalization(v[0], v[1], Tensor(), {0, 2}, 1e-3f); }, {x, g12});
  expect_gradients("group_normalization",
                   [](auto& v) { return ops::group_normalization(v[0], v[1], v[2], 2, 1, 1e-3f); },
                   {x, test::random_tensor(g, {4}), test::random_tensor(g, {4})});
  expect_gradients("group_normalization last axis",
                   [](auto& v) { return ops::group_normalization(v[0], v[1], Tensor(), 3, -1, 1e-3f); },
                   {x, test::random_tensor(g, {6})});
}

TEST(OpGradients, ConvolutionAndPooling) {
  std::mt19937 g(6);
  struct Case {
    Shape x, k;
    ops::ConvOptions o;
  };
  using P = ops::Padding;
  std::vector<Case> cases = {
      {{2, 5, 6, 3}, {3, 3, 3, 4}, {{1, 1}, {1, 1}, P::valid}},
      {{1, 6, 5, 2}, {3, 2, 2, 3}, {{2, 1}, {1, 1}, P::same}},
      {{2, 7, 3}, {3, 3, 2}, {{1}, {2}, P::causal}},
      {{1, 4, 5, 4}, {3, 3, 2, 4}, {{1, 1}, {1, 1}, P::same, false, 2}},  // grouped
      {{1, 3, 5, 4}, {2, 3, 3, 2}, {{1, 1}, {1, 1}, P::same, true}},      // channels_first
      {{1, 3, 4, 3, 2}, {2, 2, 2, 2, 3}, {{1, 1, 1}, {1, 1, 1}, P::valid}},
  };
  for (const Case& c : cases) {
    Tensor x = test::random_tensor(g, c.x), k = test::random_tensor(g, c.k), b = test::random_tensor(g, {c.k.back()});
    expect_gradients("conv", [o = c.o](auto& v) { return ops::conv(v[0], v[1], v[2], o); }, {x, k, b});
  }
  {
    ops::ConvOptions o{{2, 2}, {1, 1}, P::same};
    Tensor x = test::random_tensor(g, {1, 3, 3, 2}), k = test::random_tensor(g, {3, 3, 4, 2}), b = test::random_tensor(g, {4});
    expect_gradients("conv_transpose", [o](auto& v) { return ops::conv_transpose(v[0], v[1], v[2], o); }, {x, k, b});
    o.padding = P::valid;
    o.output_padding = {1, 0};
    expect_gradients("conv_transpose output_padding",
                     [o](auto& v) { return ops::conv_transpose(v[0], v[1], v[2], o); }, {x, k, b});
  }
  Tensor x = distinct(g, {2, 5, 5, 3});
  for (auto mode : {ops::PoolMode::max, ops::PoolMode::average})
    for (auto pad : {P::valid, P::same})
      expect_gradients("pool", [mode, pad](auto& v) { return ops::pool(v[0], mode, {2, 2}, {2, 2}, pad, false); }, {x},
                       1e-3);
}

TEST(OpGradients, DataMovement) {
  std::mt19937 g(7);
  Tensor a = test::random_tensor(g, {2, 3}), b = test::random_tensor(g, {2, 2});
  expect_gradients("concatenate", [](auto& v) { return ops::concatenate({v[0], v[1]}, 1); }, {a, b});
  Tensor x = test::random_tensor(g, {2, 3, 4});
  expect_gradients("transpose", [](auto& v) { return ops::transpose(v[0], {2, 0, 1}); }, {x});
  expect_gradients("tile", [](auto& v) { return ops::tile(v[0], {2, 1, 3}); }, {x});
  expect_gradients("pad", [](auto& v) { return ops::pad(v[0], {{0, 0}, {1, 2}, {2, 0}}); }, {x});
  expect_gradients("slice", [](auto& v) { return ops::slice(v[0], {0, 1, 1}, {2, 2, 2}); }, {x});
  expect_gradients("repeat", [](auto& v) { return ops::repeat(v[0], {1, 2, 3}); }, {x});
  Tensor img = test::random_tensor(g, {1, 3, 4, 2});
  for (auto m : {ops::ResizeMethod::nearest, ops::ResizeMethod::bilinear, ops::ResizeMethod::bicubic})
    expect_gradients("resize", [m](auto& v) { return ops::resize(v[0], 5, 7, m); }, {img}, 1e-3);
}

// The reference conv gradient and oneDNN's agree (the op uses oneDNN where it can).
TEST(OpGradients, ReshapeViewsShareTheirTensorsGradient) {
  std::mt19937 g(8);
  Tensor x = test::random_tensor(g, {2, 6}), w = test::random_tensor(g, {3, 4});
  expect_gradients("reshape", [](auto& v) { return ops::matmul(v[0].reshape({4, 3}), v[1]); }, {x, w});
}

}  // namespace
}  // namespace kerascpp
