// Fast binary, unary, relu and scale_shift kernels against their reference kernels.
#include "kernels/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/ref/ref.h"

namespace kerascpp::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Random data plus the values where activations have kinks, saturate or overflow.
std::vector<float> activation_inputs(std::mt19937& g) {
  std::vector<float> x = test::random_floats(g, 3000, -10.f, 10.f);
  const float special[] = {0.f,  -0.f,  1e-8f, -1e-8f, 1.f,   -1.f,  3.f,    -3.f,   6.f,   -6.f,
                           2.5f, -2.5f, 20.f,  -20.f,  88.f,  -88.f, 100.f,  -100.f, 1e30f, -1e30f,
                           kInf, -kInf, NAN,   0.5f,   -0.5f, 1e-3f, -1e-3f, 50.f,   -50.f, 7.f};
  x.insert(x.end(), std::begin(special), std::end(special));
  return x;
}

TEST(Unary, FastMatchesRefForEveryOp) {
  std::mt19937 g(1);
  const std::vector<float> x = activation_inputs(g);
  for (const Unary op : kAllUnary) {
    for (float alpha : {0.2f, 1.f, 1.7f}) {
      std::vector<float> got(x.size()), want(x.size());
      unary(op, x.data(), got.data(), x.size(), alpha);
      ref::unary(op, x.data(), want.data(), x.size(), alpha);
      for (size_t i = 0; i < x.size(); ++i)
        ASSERT_TRUE(test::close(got[i], want[i], 2e-7, 4e-6))
            << unary_name(op) << " alpha " << alpha << " x=" << x[i] << " got " << got[i] << " want "
            << want[i];
    }
  }
}

TEST(Relu, FastMatchesRefForAllArgumentCombinations) {
  std::mt19937 g(2);
  const std::vector<float> x = activation_inputs(g);
  for (float slope : {0.f, 0.3f, 1.f})
    for (float max_value : {kInf, 6.f, 1.f, 0.f})
      for (float threshold : {0.f, 1.5f, -1.f}) {
        std::vector<float> got(x.size()), want(x.size());
        relu(x.data(), got.data(), x.size(), slope, max_value, threshold);
        ref::relu(x.data(), want.data(), x.size(), slope, max_value, threshold);
        for (size_t i = 0; i < x.size(); ++i)
          ASSERT_TRUE(test::close(got[i], want[i], 1e-6, 1e-6))
              << "slope " << slope << " max " << max_value << " threshold " << threshold << " x=" << x[i];
      }
}

TEST(ScaleShift, FastMatchesRef) {
  std::mt19937 g(3);
  for (int64_t n : {0, 1, 7, 1000}) {
    std::vector<float> x = test::random_floats(g, n, -100.f, 100.f), got(n), want(n);
    scale_shift(x.data(), got.data(), n, 1.f / 255, -0.5f);
    ref::scale_shift(x.data(), want.data(), n, 1.f / 255, -0.5f);
    for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(test::close(got[i], want[i], 1e-7, 1e-6));
  }
}

// Random output shapes where each operand is broadcast (stride 0) along random dims, including the
// innermost one, so every row case of the fast kernel (both contiguous, one scalar, strided) runs.
TEST(Binary, FastMatchesRefWithBroadcasting) {
  std::mt19937 g(4);
  std::bernoulli_distribution coin(0.3);
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = static_cast<int>(g() % 5);
    std::vector<int64_t> shape(rank), as(rank), bs(rank);
    for (int d = 0; d < rank; ++d) shape[d] = test::random_dim(g, 6);
    int64_t na = 1, nb = 1;
    for (int d = rank - 1; d >= 0; --d) {
      as[d] = coin(g) ? 0 : na;
      bs[d] = coin(g) ? 0 : nb;
      na *= as[d] ? shape[d] : 1;
      nb *= bs[d] ? shape[d] : 1;
    }
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<float> a = test::random_floats(g, na, -3.f, 3.f), b = test::random_floats(g, nb, 0.5f, 3.f);
    for (Binary op : kAllBinary) {
      std::vector<float> got(n), want(n);
      binary(op, a.data(), as.data(), b.data(), bs.data(), got.data(), shape.data(), rank);
      ref::binary(op, a.data(), as.data(), b.data(), bs.data(), want.data(), shape.data(), rank);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_TRUE(test::close(got[i], want[i], 1e-7, 1e-6))
            << binary_name(op) << " trial " << trial << " i " << i;
    }
  }
}

TEST(Binary, MaximumAndMinimumPropagateNan) {
  const float a[] = {NAN, 1.f, 2.f}, b[] = {1.f, NAN, 1.f};
  const int64_t shape[] = {3}, st[] = {1};
  for (Binary op : {Binary::maximum, Binary::minimum}) {
    float y[3];
    binary(op, a, st, b, st, y, shape, 1);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_TRUE(std::isnan(y[1]));
    EXPECT_EQ(y[2], op == Binary::maximum ? 2.f : 1.f);
  }
}

}  // namespace
}  // namespace kerascpp::kernels
