// matmul, batch_matmul, bias_add against the reference kernel and a double-precision formula.
#include <gtest/gtest.h>

#include "kernels/ref/ref.h"
#include "op_test_util.h"
#include "ops/ops.h"

namespace kerascpp::ops {
namespace {

// a: (rows, k) @ b: (k, n) in double, rows = every leading dim of a flattened.
std::vector<double> matmul_double(const float* a, const float* b, int64_t rows, int64_t n, int64_t k) {
  std::vector<double> c(rows * n, 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) c[i * n + j] += double(a[i * k + p]) * b[p * n + j];
  return c;
}

TEST(Matmul, RandomShapesMatchRefAndDouble) {
  std::mt19937 g(100);
  for (int trial = 0; trial < 80; ++trial) {
    Shape as = test::random_shape(g, 1 + trial % 4, 7);
    const int64_t k = as.back(), n = test::random_dim(g, 40);
    const bool b_vector = trial % 7 == 0;
    Tensor a = test::random_tensor(g, as), b = test::random_tensor(g, b_vector ? Shape{k} : Shape{k, n});
    Tensor y = matmul(a, b);
    const int64_t cols = b_vector ? 1 : n, rows = shape_size(Shape(as.begin(), as.end() - 1));
    Shape want_shape(as.begin(), as.end() - 1);
    if (!b_vector) want_shape.push_back(n);
    std::vector<double> want = matmul_double(a.data<float>(), b.data<float>(), rows, cols, k);
    test::expect_close(y, want_shape, want, 1e-5, 1e-5, "matmul vs double");
    std::vector<float> r(rows * cols);
    kernels::ref::matmul(a.data<float>(), b.data<float>(), r.data(), rows, cols, k);
    test::expect_close(y, want_shape, std::vector<double>(r.begin(), r.end()), 1e-5, 1e-5, "matmul vs ref");
  }
}

// Dense at batch 1, 8 -> 10: the small path.
TEST(Matmul, TinyDenseAndBias) {
  std::mt19937 g(101);
  Tensor x = test::random_tensor(g, {1, 8}), w = test::random_tensor(g, {8, 10}),
         bias = test::random_tensor(g, {10});
  Tensor y = bias_add(matmul(x, w), bias);
  std::vector<double> want = matmul_double(x.data<float>(), w.data<float>(), 1, 10, 8);
  for (int j = 0; j < 10; ++j) want[j] += bias.data<float>()[j];
  test::expect_close(y, {1, 10}, want, 1e-6, 1e-6, "dense");
}

TEST(Matmul, RejectsBadInput) {
  EXPECT_EQ(test::value_error([] {
              matmul(Tensor::zeros({2, 3}), Tensor::zeros({4, 5}));
            }),
            "matmul: Incompatible shapes: a=(2, 3) b=(4, 5)");
  EXPECT_THROW(matmul(Tensor::zeros({}), Tensor::zeros({1, 1})), ValueError);
  EXPECT_THROW(matmul(Tensor::zeros({2, 3}), Tensor::zeros({1, 3, 5})), ValueError);
  std::string msg = test::value_error([] { matmul(test::int_tensor({2, 3}), Tensor::zeros({3, 5})); });
  EXPECT_TRUE(test::contains(msg, "matmul") && test::contains(msg, "int32")) << msg;
  EXPECT_THROW(matmul(Tensor(), Tensor::zeros({3, 5})), ValueError);
}

TEST(BatchMatmul, BroadcastBatchDimsMatchDouble) {
  std::mt19937 g(102);
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {{{3, 2, 4}, {3, 4, 5}, {3, 2, 5}}, {{2, 1, 2, 3}, {3, 3, 4}, {2, 3, 2, 4}},
                        {{4, 3}, {2, 3, 2}, {2, 4, 2}},    {{5, 2, 3}, {3, 6}, {5, 2, 6}},
                        {{0, 2, 3}, {1, 3, 2}, {0, 2, 2}}, {{2, 1, 0}, {2, 0, 3}, {2, 1, 3}}};
  for (const Case& c : cases) {
    Tensor a = test::random_tensor(g, c.a), b = test::random_tensor(g, c.b);
    Tensor y = batch_matmul(a, b);
    const int64_t m = c.a[c.a.size() - 2], k = c.a.back(), n = c.b.back();
    // Out batch index -> operand batch index, dim by dim (a dim of 1 repeats: index % 1 == 0).
    Shape batch(c.out.begin(), c.out.end() - 2);
    std::vector<double> want;
    for (int64_t i = 0; i < shape_size(batch); ++i) {
      auto offset = [&](const Shape& s) {
        int64_t rest = i, off = 0, stride = 1;
        const int extra = static_cast<int>(batch.size()) - static_cast<int>(s.size() - 2);
        for (int d = static_cast<int>(batch.size()) - 1; d >= 0; --d) {
          int64_t idx = rest % batch[d];
          rest /= batch[d];
          if (d - extra >= 0) {
            off += (idx % s[d - extra]) * stride;
            stride *= s[d - extra];
          }
        }
        return off;
      };
      auto part = matmul_double(a.data<float>() + offset(c.a) * m * k, b.data<float>() + offset(c.b) * k * n,
                                m, n, k);
      want.insert(want.end(), part.begin(), part.end());
    }
    test::expect_close(y, c.out, want, 1e-5, 1e-5, "batch_matmul " + shape_str(c.a) + " @ " + shape_str(c.b));
  }
}

TEST(BatchMatmul, RejectsBadInput) {
  EXPECT_EQ(test::value_error([] {
              batch_matmul(Tensor::zeros({2, 2, 3}), Tensor::zeros({2, 4, 5}));
            }),
            "batch_matmul: Incompatible shapes: a=(2, 2, 3) b=(2, 4, 5)");
  EXPECT_THROW(batch_matmul(Tensor::zeros({2, 2, 3}), Tensor::zeros({3, 3, 5})), ValueError);
  EXPECT_THROW(batch_matmul(Tensor::zeros({3}), Tensor::zeros({3, 5})), ValueError);
  EXPECT_THROW(batch_matmul(Tensor::zeros({2, 3}), test::int_tensor({3, 5})), ValueError);
}

TEST(BiasAdd, MatchesDoubleAndRejectsBadBias) {
  std::mt19937 g(103);
  for (const Shape& s : {Shape{3}, Shape{2, 5}, Shape{2, 3, 4}, Shape{0, 4}, Shape{2, 0}}) {
    Tensor x = test::random_tensor(g, s), bias = test::random_tensor(g, {s.back()});
    std::vector<double> want(x.size());
    for (int64_t i = 0; i < x.size(); ++i)
      want[i] = double(x.data<float>()[i]) + bias.data<float>()[i % s.back()];
    test::expect_close(bias_add(x, bias), s, want, 0, 1e-7, "bias_add " + shape_str(s));
  }
  std::string msg = test::value_error([] { bias_add(Tensor::zeros({2, 3}), Tensor::zeros({4})); });
  EXPECT_TRUE(test::contains(msg, "bias_add") && test::contains(msg, "(2, 3)") && test::contains(msg, "(4,)"))
      << msg;
  EXPECT_THROW(bias_add(Tensor::zeros({2, 3}), Tensor::zeros({1, 3})), ValueError);
  EXPECT_THROW(bias_add(Tensor::zeros({}), Tensor::zeros({1})), ValueError);
  EXPECT_THROW(bias_add(test::int_tensor({2, 3}), Tensor::zeros({3})), ValueError);
}

}  // namespace
}  // namespace kerascpp::ops
