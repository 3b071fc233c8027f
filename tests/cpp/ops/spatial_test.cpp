// pad, slice, repeat, resize, reduce_max and reduce_mean: against index formulas (random shapes from a
// fixed seed, dims 0 and 1 included), against values TensorFlow computed for tf.image.resize, and
// bad input rejected with a ValueError that names the op.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "op_test_util.h"
#include "ops/ops.h"

namespace kerascpp::ops {
namespace {

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

TEST(Pad, RandomShapesAgainstIndexFormula) {
  std::mt19937 g(600);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = 1 + trial % 4;
    const Shape s = test::random_shape(g, rank, 4);
    std::vector<std::pair<int64_t, int64_t>> pads(rank);
    for (auto& p : pads) p = {g() % 3, g() % 3};
    const float value = trial % 2 ? 0.f : -2.5f;
    Tensor x = test::random_tensor(g, s);
    Tensor y = pad(x, pads, value);
    Shape want = s;
    for (int d = 0; d < rank; ++d) want[d] += pads[d].first + pads[d].second;
    ASSERT_EQ(y.shape(), want);
    for (int64_t i = 0; i < y.size(); ++i) {
      std::vector<int64_t> idx = unravel(i, want);
      bool inside = true;
      for (int d = 0; d < rank; ++d) {
        idx[d] -= pads[d].first;
        inside = inside && idx[d] >= 0 && idx[d] < s[d];
      }
      ASSERT_EQ(y.data<float>()[i], inside ? x.data<float>()[ravel(idx, s)] : value) << trial << " at " << i;
    }
  }
}

TEST(Pad, Int32ZerosAndBadInput) {
  Tensor y = pad(test::int_tensor({1, 2}, 1), {{0, 1}, {1, 0}});
  EXPECT_EQ(y.dtype(), DType::int32);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(std::vector<int32_t>(y.data<int32_t>(), y.data<int32_t>() + 6),
            (std::vector<int32_t>{0, 1, 2, 0, 0, 0}));
  std::string msg = test::value_error([] { pad(Tensor::zeros({2, 2}), {{0, -1}, {0, 0}}); });
  EXPECT_TRUE(test::contains(msg, "pad") && test::contains(msg, "non-negative") &&
              test::contains(msg, "(0, -1)"))
      << msg;
  msg = test::value_error([] { pad(Tensor::zeros({2, 2}), {{1, 1}}); });
  EXPECT_TRUE(test::contains(msg, "pad") && test::contains(msg, "(2, 2)")) << msg;
  EXPECT_THROW(pad(test::int_tensor({2}), {{1, 1}}, 1.f), ValueError);
  EXPECT_THROW(pad(Tensor(), {}), ValueError);
}

TEST(Slice, RandomWindowsAgainstIndexFormula) {
  std::mt19937 g(601);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = 1 + trial % 4;
    const Shape s = test::random_shape(g, rank, 5);
    std::vector<int64_t> begin(rank), size(rank);
    for (int d = 0; d < rank; ++d) {
      begin[d] = s[d] ? g() % (s[d] + 1) : 0;
      size[d] = g() % (s[d] - begin[d] + 1);
    }
    Tensor x = trial % 2 ? test::random_tensor(g, s) : test::int_tensor(s);
    Tensor y = slice(x, begin, size);
    ASSERT_EQ(y.shape(), Shape(size.begin(), size.end()));
    ASSERT_EQ(y.dtype(), x.dtype());
    for (int64_t i = 0; i < y.size(); ++i) {
      std::vector<int64_t> idx = unravel(i, size);
      for (int d = 0; d < rank; ++d) idx[d] += begin[d];
      if (x.dtype() == DType::int32)
        ASSERT_EQ(y.data<int32_t>()[i], x.data<int32_t>()[ravel(idx, s)]);
      else
        ASSERT_EQ(y.data<float>()[i], x.data<float>()[ravel(idx, s)]);
    }
  }
}

TEST(Slice, RejectsWindowsOutsideX) {
  std::string msg = test::value_error([] { slice(Tensor::zeros({4, 3}), {1, 0}, {4, 3}); });
  EXPECT_TRUE(test::contains(msg, "slice") && test::contains(msg, "(4, 3)")) << msg;
  EXPECT_THROW(slice(Tensor::zeros({4, 3}), {-1, 0}, {1, 1}), ValueError);
  EXPECT_THROW(slice(Tensor::zeros({4, 3}), {0}, {1}), ValueError);
}

TEST(Repeat, RandomShapesAgainstIndexFormula) {
  std::mt19937 g(602);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = 1 + trial % 5;
    const Shape s = test::random_shape(g, rank, 4);
    std::vector<int64_t> reps(rank);
    for (auto& r : reps) r = g() % 4;
    Tensor x = test::random_tensor(g, s);
    Tensor y = repeat(x, reps);
    Shape want = s;
    for (int d = 0; d < rank; ++d) want[d] *= reps[d];
    ASSERT_EQ(y.shape(), want);
    for (int64_t i = 0; i < y.size(); ++i) {
      std::vector<int64_t> idx = unravel(i, want);
      for (int d = 0; d < rank; ++d) idx[d] /= reps[d];
      ASSERT_EQ(y.data<float>()[i], x.data<float>()[ravel(idx, s)]);
    }
  }
  Tensor y = repeat(test::int_tensor({2, 1}), {2, 2});  // numpy.repeat: rows doubled in place
  EXPECT_EQ(std::vector<int32_t>(y.data<int32_t>(), y.data<int32_t>() + 8),
            (std::vector<int32_t>{0, 0, 0, 0, 1, 1, 1, 1}));
  std::string msg = test::value_error([] { repeat(Tensor::zeros({2}), {-1}); });
  EXPECT_TRUE(test::contains(msg, "repeat") && test::contains(msg, "-1")) << msg;
}

// tf.image.resize([[1, 2], [3, 4]], size, method) as TensorFlow 2.21 computes it.
TEST(Resize, MatchesTensorFlowValues) {
  Tensor x = Tensor::from_vector({1, 2, 2, 1}, {1, 2, 3, 4});
  test::expect_close(resize(x, 4, 4, ResizeMethod::bilinear), {1, 4, 4, 1},
                     {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}, 1e-6,
                     0, "bilinear 4x4");
  test::expect_close(resize(x, 3, 3, ResizeMethod::nearest), {1, 3, 3, 1}, {1, 2, 2, 3, 4, 4, 3, 4, 4}, 0, 0,
                     "nearest 3x3");
  test::expect_close(resize(x, 3, 4, ResizeMethod::bicubic), {1, 3, 4, 1},
                     {0.7799870371818542, 1.0753651857376099, 1.6610794067382812, 1.9564577341079712,
                      1.9117648601531982, 2.2071428298950195, 2.7928571701049805, 3.08823561668396,
                      3.0435423851013184, 3.3389201164245605, 3.9246344566345215, 4.220012664794922},
                     1e-6, 1e-6, "bicubic 3x4");
  test::expect_close(resize(x, 1, 3, ResizeMethod::bilinear), {1, 1, 3, 1}, {2, 2.5, 3}, 1e-6, 0,
                     "bilinear 1x3");
}

// channels_first is the channels_last result transposed, for every method.
TEST(Resize, ChannelsFirstIsTransposedChannelsLast) {
  std::mt19937 g(603);
  for (ResizeMethod m : {ResizeMethod::nearest, ResizeMethod::bilinear, ResizeMethod::bicubic}) {
    Tensor x = test::random_tensor(g, {2, 5, 3, 4});
    Tensor want = transpose(resize(x, 7, 2, m), {0, 3, 1, 2});
    Tensor got = resize(transpose(x, {0, 3, 1, 2}), 7, 2, m, true);
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-6);
  }
  EXPECT_EQ(resize(Tensor::zeros({0, 3, 3, 2}), 5, 5, ResizeMethod::bilinear).shape(), (Shape{0, 5, 5, 2}));
  EXPECT_EQ(resize(Tensor::zeros({1, 3, 3, 0}), 5, 5, ResizeMethod::bilinear).shape(), (Shape{1, 5, 5, 0}));
}

TEST(Resize, RejectsBadInput) {
  std::string msg = test::value_error([] { resize(Tensor::zeros({3, 3, 1}), 2, 2, ResizeMethod::nearest); });
  EXPECT_TRUE(test::contains(msg, "resize") && test::contains(msg, "(3, 3, 1)")) << msg;
  msg = test::value_error([] { resize(Tensor::zeros({1, 3, 3, 1}), 0, 2, ResizeMethod::nearest); });
  EXPECT_TRUE(test::contains(msg, "positive")) << msg;
  EXPECT_THROW(resize(Tensor::zeros({1, 0, 3, 1}), 2, 2, ResizeMethod::bilinear), ValueError);
  EXPECT_THROW(resize(test::int_tensor({1, 2, 2, 1}), 2, 2, ResizeMethod::bilinear), ValueError);
}

// max / mean over any set of axes against a direct loop over the reduced positions.
TEST(ReduceAxes, RandomAxesAgainstDirectLoop) {
  std::mt19937 g(604);
  for (int trial = 0; trial < 80; ++trial) {
    const int rank = 1 + trial % 5;
    Shape s = test::random_shape(g, rank, 4);
    std::vector<int> axes;
    for (int d = 0; d < rank; ++d)
      if (g() % 2) axes.push_back(g() % 2 ? d : d - rank);
    std::shuffle(axes.begin(), axes.end(), g);
    const bool keepdims = g() % 2;
    Tensor x = test::random_tensor(g, s, -5.f, 5.f);
    std::vector<bool> reduced(rank, false);
    for (int a : axes) reduced[a < 0 ? a + rank : a] = true;
    Shape kept = s;
    for (int d = 0; d < rank; ++d)
      if (reduced[d]) kept[d] = 1;
    std::vector<double> want_max(shape_size(kept), -std::numeric_limits<double>::infinity()),
        sum(shape_size(kept), 0.0);
    int64_t count = 1;
    for (int d = 0; d < rank; ++d)
      if (reduced[d]) count *= s[d];
    for (int64_t i = 0; i < x.size(); ++i) {
      std::vector<int64_t> idx = unravel(i, s);
      for (int d = 0; d < rank; ++d)
        if (reduced[d]) idx[d] = 0;
      const int64_t o = ravel(idx, kept);
      want_max[o] = std::max(want_max[o], double(x.data<float>()[i]));
      sum[o] += x.data<float>()[i];
    }
    std::vector<double> want_mean(sum.size());
    for (size_t i = 0; i < sum.size(); ++i) want_mean[i] = sum[i] / double(count);  // 0 / 0 = NaN as numpy
    Shape out;
    for (int d = 0; d < rank; ++d)
      if (!reduced[d] || keepdims) out.push_back(kept[d]);
    test::expect_close(reduce_max(x, axes, keepdims), out, want_max, 0, 0,
                       "max trial " + std::to_string(trial));
    test::expect_close(reduce_mean(x, axes, keepdims), out, want_mean, 1e-6, 1e-6,
                       "mean trial " + std::to_string(trial));
  }
}

TEST(ReduceAxes, RejectsBadAxes) {
  std::string msg = test::value_error([] { reduce_max(Tensor::zeros({2, 3}), {1, -1}); });
  EXPECT_TRUE(test::contains(msg, "reduce_max") && test::contains(msg, "repeat")) << msg;
  msg = test::value_error([] { reduce_mean(Tensor::zeros({2, 3}), {2}); });
  EXPECT_TRUE(test::contains(msg, "reduce_mean")) << msg;
  EXPECT_THROW(reduce_mean(test::int_tensor({2}), {0}), ValueError);
}

}  // namespace
}  // namespace kerascpp::ops
