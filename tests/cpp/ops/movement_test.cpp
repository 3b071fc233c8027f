// concatenate, transpose and tile on int32 and float32 (and 1- and 8-byte dtypes), against index
// formulas; bad axes, perms and reps rejected.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "op_test_util.h"
#include "ops/ops.h"

namespace kerascpp::ops {
namespace {

std::vector<int32_t> ints(const Tensor& t) { return {t.data<int32_t>(), t.data<int32_t>() + t.size()}; }

// Row-major multi-index of flat index i in shape s.
std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + idx[d];
  return i;
}

TEST(Concatenate, Int32Example) {
  Tensor a = test::int_tensor({2, 2}, 0), b = test::int_tensor({2, 1}, 100);
  Tensor y = concatenate({a, b}, 1);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.dtype(), DType::int32);
  EXPECT_EQ(ints(y), (std::vector<int32_t>{0, 1, 100, 2, 3, 101}));
  EXPECT_EQ(ints(concatenate({a, b.reshape({1, 2})}, 0)), (std::vector<int32_t>{0, 1, 2, 3, 100, 101}));
}

TEST(Concatenate, RandomShapesEveryAxis) {
  std::mt19937 g(500);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = 1 + trial % 4, axis = static_cast<int>(g() % rank);
    const DType dtype = trial % 2 ? DType::int32 : DType::float32;
    Shape base = test::random_shape(g, rank, 4);
    std::vector<Tensor> xs;
    for (int t = 0, n = 1 + g() % 3; t < n; ++t) {
      Shape s = base;
      s[axis] = test::random_dim(g, 3);
      Tensor x = dtype == DType::int32 ? test::int_tensor(s, 1000 * t) : test::random_tensor(g, s);
      xs.push_back(x);
    }
    Tensor y = concatenate(xs, axis - (trial % 3 == 0 ? rank : 0));
    Shape want = base;
    want[axis] = 0;
    for (const Tensor& x : xs) want[axis] += x.dim(axis);
    ASSERT_EQ(y.shape(), want);
    ASSERT_EQ(y.dtype(), dtype);
    // Each output element comes from the input whose range along axis holds its index.
    for (int64_t i = 0; i < y.size(); ++i) {
      std::vector<int64_t> idx = unravel(i, want);
      size_t t = 0;
      while (idx[axis] >= xs[t].dim(axis)) idx[axis] -= xs[t++].dim(axis);
      const int64_t src = ravel(idx, xs[t].shape());
      if (dtype == DType::int32)
        ASSERT_EQ(y.data<int32_t>()[i], xs[t].data<int32_t>()[src]);
      else
        ASSERT_EQ(y.data<float>()[i], xs[t].data<float>()[src]);
    }
  }
}

TEST(Concatenate, RejectsBadInput) {
  EXPECT_THROW(concatenate({}, 0), ValueError);
  std::string msg = test::value_error([] { concatenate({Tensor::zeros({2, 3}), Tensor::zeros({3, 3})}, 1); });
  EXPECT_TRUE(test::contains(msg, "concatenate") && test::contains(msg, "(2, 3)") &&
              test::contains(msg, "(3, 3)"))
      << msg;
  EXPECT_THROW(concatenate({Tensor::zeros({2, 3}), Tensor::zeros({2, 3, 1})}, 0), ValueError);
  EXPECT_THROW(concatenate({Tensor::zeros({2, 3}), test::int_tensor({2, 3})}, 0), ValueError);
  EXPECT_THROW(concatenate({Tensor::zeros({2, 3})}, 2), ValueError);
  EXPECT_THROW(concatenate({Tensor::zeros({})}, 0), ValueError);
}

TEST(Transpose, RandomPermsInt32AndFloat32) {
  std::mt19937 g(501);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = trial % 6;
    Shape s = test::random_shape(g, rank, 5);
    std::vector<int> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), g);
    Tensor x = trial % 2 ? test::int_tensor(s) : test::random_tensor(g, s);
    Tensor y = transpose(x, perm);
    Shape want(rank);
    for (int d = 0; d < rank; ++d) want[d] = s[perm[d]];
    ASSERT_EQ(y.shape(), want);
    ASSERT_EQ(y.dtype(), x.dtype());
    for (int64_t i = 0; i < y.size(); ++i) {
      std::vector<int64_t> out = unravel(i, want), in(rank);
      for (int d = 0; d < rank; ++d) in[perm[d]] = out[d];
      ASSERT_EQ(std::memcmp(static_cast<char*>(y.raw_data()) + 4 * i,
                            static_cast<char*>(x.raw_data()) + 4 * ravel(in, s), 4),
                0);
    }
  }
}

TEST(Transpose, OtherDtypesAndNegativeAxes) {
  Tensor x = Tensor::empty({2, 3}, DType::uint8);
  for (int i = 0; i < 6; ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(i);
  Tensor y = transpose(x, {-1, 0});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(std::vector<uint8_t>(y.data<uint8_t>(), y.data<uint8_t>() + 6),
            (std::vector<uint8_t>{0, 3, 1, 4, 2, 5}));
  Tensor z = Tensor::empty({2, 1, 2}, DType::int64);
  for (int i = 0; i < 4; ++i) z.data<int64_t>()[i] = int64_t(1) << (40 + i);
  Tensor t = transpose(z, {2, 1, 0});
  EXPECT_EQ(t.data<int64_t>()[1], int64_t(1) << 42);
}

TEST(Transpose, RejectsBadPerm) {
  std::string msg = test::value_error([] { transpose(Tensor::zeros({2, 3, 4}), {0, 0, 1}); });
  EXPECT_TRUE(test::contains(msg, "transpose") && test::contains(msg, "(0, 0, 1)")) << msg;
  EXPECT_THROW(transpose(Tensor::zeros({2, 3}), {0}), ValueError);
  EXPECT_THROW(transpose(Tensor::zeros({2, 3}), {0, 2}), ValueError);
  EXPECT_THROW(transpose(Tensor::zeros({2, 3}), {0, -3}), ValueError);
}

TEST(Tile, RepeatVectorExampleAndNumpyRules) {
  // RepeatVector: (b, 1, f) tiled by (1, n, 1).
  Tensor x = test::int_tensor({2, 1, 3});
  Tensor y = tile(x, {1, 2, 1});
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(ints(y), (std::vector<int32_t>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  // Fewer reps than dims: leading 1s. More reps: the shape gets leading 1s.
  EXPECT_EQ(ints(tile(test::int_tensor({2, 2}), {2})), (std::vector<int32_t>{0, 1, 0, 1, 2, 3, 2, 3}));
  Tensor z = tile(test::int_tensor({2}), {2, 1});
  EXPECT_EQ(z.shape(), (Shape{2, 2}));
  EXPECT_EQ(ints(z), (std::vector<int32_t>{0, 1, 0, 1}));
  EXPECT_EQ(tile(test::int_tensor({2, 3}), {0, 2}).shape(), (Shape{0, 6}));
  EXPECT_EQ(tile(Tensor::zeros({}), {}).shape(), Shape{});
}

TEST(Tile, RandomShapesFloat32) {
  std::mt19937 g(502);
  for (int trial = 0; trial < 40; ++trial) {
    const int rank = trial % 5;
    Shape s = test::random_shape(g, rank, 4);
    std::vector<int64_t> reps(rank);
    for (auto& r : reps) r = test::random_dim(g, 3);
    Tensor x = test::random_tensor(g, s);
    Tensor y = tile(x, reps);
    Shape want(rank);
    for (int d = 0; d < rank; ++d) want[d] = s[d] * reps[d];
    ASSERT_EQ(y.shape(), want);
    for (int64_t i = 0; i < y.size(); ++i) {
      std::vector<int64_t> idx = unravel(i, want);
      for (int d = 0; d < rank; ++d) idx[d] %= s[d];
      ASSERT_EQ(y.data<float>()[i], x.data<float>()[ravel(idx, s)]);
    }
  }
  std::string msg = test::value_error([] { tile(Tensor::zeros({2}), {-1}); });
  EXPECT_TRUE(test::contains(msg, "tile") && test::contains(msg, "-1")) << msg;
}

}  // namespace
}  // namespace kerascpp::ops
