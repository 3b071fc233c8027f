// softmax, log_softmax, l2_normalize and sum along every axis of random shapes, against
// double-precision formulas; bad axes and dtypes rejected.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/ref/ref.h"
#include "op_test_util.h"
#include "ops/ops.h"

namespace kerascpp::ops {
namespace {

// Calls f(outer index o, inner index i, axis length, stride) for every line along `axis`; elements
// of a line are at base + a * stride.
template <typename F>
void for_each_line(const Shape& s, int axis, F f) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) f(o * s[axis] * inner + i, s[axis], inner, o * inner + i);
}

TEST(Softmax, EveryAxisMatchesDouble) {
  std::mt19937 g(400);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = 1 + trial % 4;
    Shape s = test::random_shape(g, rank, 6);
    Tensor x = test::random_tensor(g, s, -8.f, 8.f);
    for (int axis = -rank; axis < rank; ++axis) {
      std::vector<double> soft(x.size()), logsoft(x.size());
      for_each_line(s, axis < 0 ? axis + rank : axis, [&](int64_t base, int64_t n, int64_t stride, int64_t) {
        double mx = -INFINITY, total = 0;
        for (int64_t a = 0; a < n; ++a) mx = std::max(mx, double(x.data<float>()[base + a * stride]));
        for (int64_t a = 0; a < n; ++a) total += std::exp(double(x.data<float>()[base + a * stride]) - mx);
        for (int64_t a = 0; a < n; ++a) {
          double v = x.data<float>()[base + a * stride];
          soft[base + a * stride] = std::exp(v - mx) / total;
          logsoft[base + a * stride] = v - mx - std::log(total);
        }
      });
      test::expect_close(softmax(x, axis), s, soft, 1e-7, 1e-5, "softmax axis " + std::to_string(axis));
      test::expect_close(log_softmax(x, axis), s, logsoft, 1e-5, 1e-5,
                         "log_softmax axis " + std::to_string(axis));
    }
  }
}

TEST(Softmax, LargeLogitsAndReference) {
  Tensor x = Tensor::from_vector({1, 3}, {1000.f, 1001.f, 1002.f});
  Tensor y = softmax(x);
  const double e1 = std::exp(-1.0), e2 = std::exp(-2.0), t = 1 + e1 + e2;
  test::expect_close(y, {1, 3}, {e2 / t, e1 / t, 1 / t}, 1e-7, 1e-6, "softmax large");
  std::vector<float> r(3);
  kernels::ref::softmax(x.data<float>(), r.data(), 1, 3, 1);
  test::expect_close(y, {1, 3}, std::vector<double>(r.begin(), r.end()), 1e-7, 1e-6, "softmax vs ref");
  test::expect_close(log_softmax(x), {1, 3}, {-2 - std::log(t), -1 - std::log(t), -std::log(t)}, 1e-6, 1e-6,
                     "log_softmax large");
}

TEST(Softmax, RejectsBadInput) {
  std::string msg = test::value_error([] { softmax(Tensor::zeros({2, 3}), 2); });
  EXPECT_TRUE(test::contains(msg, "softmax") && test::contains(msg, "axis 2")) << msg;
  EXPECT_THROW(softmax(Tensor::zeros({2, 3}), -3), ValueError);
  EXPECT_THROW(log_softmax(Tensor::zeros({}), 0), ValueError);
  msg = test::value_error([] { softmax(test::int_tensor({2, 3})); });
  EXPECT_TRUE(test::contains(msg, "int32")) << msg;
}

TEST(Sum, EveryAxisWithAndWithoutKeepdims) {
  std::mt19937 g(401);
  for (int trial = 0; trial < 40; ++trial) {
    const int rank = 1 + trial % 4;
    Shape s = test::random_shape(g, rank, 6);
    Tensor x = test::random_tensor(g, s);
    for (int axis = 0; axis < rank; ++axis) {
      Shape kept = s, dropped = s;
      kept[axis] = 1;
      dropped.erase(dropped.begin() + axis);
      std::vector<double> want(shape_size(kept), 0.0);
      for_each_line(s, axis, [&](int64_t base, int64_t n, int64_t stride, int64_t out) {
        for (int64_t a = 0; a < n; ++a) want[out] += x.data<float>()[base + a * stride];
      });
      test::expect_close(sum(x, axis, true), kept, want, 1e-6, 1e-6, "sum keepdims");
      test::expect_close(sum(x, axis - rank), dropped, want, 1e-6, 1e-6, "sum");
    }
  }
  EXPECT_THROW(sum(Tensor::zeros({2}), 1), ValueError);
  EXPECT_THROW(sum(test::int_tensor({2}), 0), ValueError);
}

TEST(L2Normalize, EveryAxisMatchesDouble) {
  std::mt19937 g(402);
  for (int trial = 0; trial < 40; ++trial) {
    const int rank = 1 + trial % 4;
    Shape s = test::random_shape(g, rank, 6);
    Tensor x = test::random_tensor(g, s, -3.f, 3.f);
    for (int axis = 0; axis < rank; ++axis) {
      std::vector<double> want(x.size());
      for_each_line(s, axis, [&](int64_t base, int64_t n, int64_t stride, int64_t) {
        double sq = 0;
        for (int64_t a = 0; a < n; ++a) sq += std::pow(double(x.data<float>()[base + a * stride]), 2);
        for (int64_t a = 0; a < n; ++a)
          want[base + a * stride] = x.data<float>()[base + a * stride] / std::sqrt(std::max(sq, 1e-12));
      });
      test::expect_close(l2_normalize(x, axis), s, want, 1e-7, 1e-5, "l2_normalize");
    }
  }
  // All zeros: epsilon keeps the result 0, not NaN.
  test::expect_close(l2_normalize(Tensor::zeros({2, 3}), -1), {2, 3}, std::vector<double>(6, 0.0), 0, 0,
                     "zeros");
  EXPECT_THROW(l2_normalize(Tensor::zeros({2}), 1), ValueError);
  EXPECT_THROW(l2_normalize(test::int_tensor({2}), 0), ValueError);
}

}  // namespace
}  // namespace kerascpp::ops
