// oneDNN convolution / deconvolution / pooling plans against the reference kernels: random
// geometries from a fixed seed over 1-3 spatial dims, both layouts, groups, strides, dilation and
// asymmetric padding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "kernels/conv.h"
#include "kernels/ref/ref.h"
#include "kernel_test_util.h"

namespace kerascpp::kernels {
namespace {

int64_t pick(std::mt19937& r, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(r); }

int64_t volume(int64_t n, int64_t c, const int64_t* s) { return n * c * s[0] * s[1] * s[2]; }

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(test::close(got[i], want[i], 1e-4, 1e-4)) << what << " at " << i << ": " << got[i] << " vs " << want[i];
}

// A random geometry; for a transposed one, out follows from in, kernel, stride and padding.
ConvGeometry random_conv(std::mt19937& r, bool transpose) {
  ConvGeometry g;
  g.spatial = static_cast<int>(pick(r, 1, 3));
  g.channels_first = pick(r, 0, 1);
  g.transpose = transpose;
  g.n = pick(r, 1, 3);
  g.groups = transpose ? 1 : pick(r, 1, 3);
  g.ic = g.groups * pick(r, 1, 4);
  g.oc = g.groups * pick(r, 1, 4);
  for (int d = 3 - g.spatial; d < 3; ++d) {
    g.k[d] = pick(r, 1, 3);
    g.stride[d] = pick(r, 1, 3);
    g.dilation[d] = pick(r, 1, 2);
    const int64_t dk = (g.k[d] - 1) * g.dilation[d] + 1;
    g.pad_l[d] = pick(r, 0, dk - 1);
    g.pad_r[d] = pick(r, 0, dk - 1);
    if (transpose) {
      g.in[d] = pick(r, 1, 6);
      g.out[d] = (g.in[d] - 1) * g.stride[d] + dk - g.pad_l[d] - g.pad_r[d];
      if (g.out[d] < 1) g.pad_r[d] = 0, g.pad_l[d] = 0, g.out[d] = (g.in[d] - 1) * g.stride[d] + dk;
    } else {
      g.in[d] = dk + pick(r, 0, 6);
      g.out[d] = (g.in[d] + g.pad_l[d] + g.pad_r[d] - dk) / g.stride[d] + 1;
    }
  }
  return g;
}

void check_conv(const ConvGeometry& g, std::mt19937& r, const std::string& what) {
  const int64_t kvol = g.k[0] * g.k[1] * g.k[2] * (g.ic / g.groups) * g.oc;
  const auto x = test::random_floats(r, volume(g.n, g.ic, g.in));
  const auto w = test::random_floats(r, kvol);
  const auto b = test::random_floats(r, g.oc);
  std::vector<float> want(volume(g.n, g.oc, g.out)), got(want.size(), -7.f);
  ref::conv(g, x.data(), w.data(), b.data(), want.data());
  std::string why;
  auto plan = dnnl_conv_plan(g, w.data(), b.data(), &why);
  ASSERT_TRUE(plan) << what << ": " << why;
  std::vector<char> scratch(dnnl_scratch_bytes(*plan) + 1);
  dnnl_conv_run(*plan, x.data(), got.data(), scratch.data());
  expect_close(got, want, what);
}

TEST(Conv, OneDnnMatchesReference) {
  std::mt19937 r(1234);
  for (int i = 0; i < 60; ++i) check_conv(random_conv(r, false), r, "conv case " + std::to_string(i));
}

TEST(ConvTranspose, OneDnnMatchesReference) {
  std::mt19937 r(99);
  for (int i = 0; i < 40; ++i) check_conv(random_conv(r, true), r, "conv_transpose case " + std::to_string(i));
}

TEST(Conv, DepthwiseIsGroupsEqualToChannels) {
  // Keras's depthwise kernel (kh, kw, c, m) is the grouped kernel (kh, kw, 1, c * m).
  std::mt19937 r(5);
  ConvGeometry g;
  g.n = 2, g.ic = 3, g.groups = 3, g.oc = 6;
  g.in[1] = g.in[2] = 7, g.k[1] = g.k[2] = 3, g.out[1] = g.out[2] = 5;
  check_conv(g, r, "depthwise");
}

TEST(Conv, ReferenceBiasOnlyTransposedOutputsWhenNothingReachesThem) {
  // out beyond the last tap (Keras output_padding): those cells hold the bias alone.
  ConvGeometry g;
  g.transpose = true, g.spatial = 1, g.ic = 1, g.oc = 1;
  g.in[2] = 2, g.k[2] = 1, g.stride[2] = 2, g.out[2] = 4, g.pad_r[2] = -1;
  const float x[] = {1.f, 2.f}, w[] = {3.f}, b[] = {0.5f};
  float y[4];
  ref::conv(g, x, w, b, y);
  EXPECT_FLOAT_EQ(y[0], 3.5f);
  EXPECT_FLOAT_EQ(y[1], 0.5f);
  EXPECT_FLOAT_EQ(y[2], 6.5f);
  EXPECT_FLOAT_EQ(y[3], 0.5f);
}

TEST(Pool, OneDnnMatchesReference) {
  std::mt19937 r(77);
  for (int i = 0; i < 150; ++i) {
    PoolGeometry g;
    g.spatial = static_cast<int>(pick(r, 1, 3));
    g.channels_first = pick(r, 0, 1);
    g.kind = pick(r, 0, 1) ? PoolKind::max : PoolKind::average;
    g.n = pick(r, 1, 3), g.c = pick(r, 1, 5);
    for (int d = 3 - g.spatial; d < 3; ++d) {
      g.k[d] = pick(r, 1, 3), g.stride[d] = pick(r, 1, 3);
      g.pad_l[d] = pick(r, 0, g.k[d] - 1), g.pad_r[d] = pick(r, 0, g.k[d] - 1);
      g.in[d] = g.k[d] + pick(r, 0, 6);
      g.out[d] = (g.in[d] + g.pad_l[d] + g.pad_r[d] - g.k[d]) / g.stride[d] + 1;
    }
    const auto x = test::random_floats(r, volume(g.n, g.c, g.in));
    std::vector<float> want(volume(g.n, g.c, g.out)), got(want.size(), -7.f);
    ref::pool(g, x.data(), want.data());
    std::string why;
    auto plan = dnnl_pool_plan(g, &why);
    ASSERT_TRUE(plan) << why;
    std::vector<char> scratch(dnnl_scratch_bytes(*plan) + 1);
    dnnl_pool_run(*plan, x.data(), got.data(), scratch.data());
    expect_close(got, want, "pool case " + std::to_string(i));
  }
}

TEST(Pool, GradientIsTheReferencesBitForBit) {
  std::mt19937 r(78);
  for (int i = 0; i < 300; ++i) {
    PoolGeometry g;
    g.spatial = static_cast<int>(pick(r, 1, 3));
    g.channels_first = i % 10 == 0;  // the reference itself: checked to be taken
    g.kind = pick(r, 0, 1) ? PoolKind::max : PoolKind::average;
    g.n = pick(r, 1, 3), g.c = pick(r, 1, 40);  // vector blocks of channels and a tail
    for (int d = 3 - g.spatial; d < 3; ++d) {
      g.k[d] = pick(r, 1, 3), g.stride[d] = pick(r, 1, 3);  // strides below the pool: overlapping windows
      g.pad_l[d] = pick(r, 0, g.k[d] - 1), g.pad_r[d] = pick(r, 0, g.k[d] - 1);
      g.in[d] = g.k[d] + pick(r, 0, 6);
      g.out[d] = (g.in[d] + g.pad_l[d] + g.pad_r[d] - g.k[d]) / g.stride[d] + 1;
    }
    auto x = test::random_floats(r, volume(g.n, g.c, g.in));
    for (size_t j = 0; j < x.size(); j += 7) x[j] = x[(j + 1) % x.size()];  // ties: the first maximum wins
    if (x.size() > 3) x[3] = NAN;
    const auto dy = test::random_floats(r, volume(g.n, g.c, g.out));
    std::vector<float> want(x.size(), 5.f), got(x.size(), -7.f);
    ref::pool_grad(g, x.data(), dy.data(), want.data());
    pool_grad(g, x.data(), dy.data(), got.data());
    ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << "pool_grad case " << i;
  }
}

TEST(Pool, ReferenceAverageCountsOnlyCellsInsideTheInput) {
  PoolGeometry g;
  g.spatial = 1, g.kind = PoolKind::average, g.in[2] = 3, g.k[2] = 2, g.stride[2] = 2, g.out[2] = 2, g.pad_r[2] = 1;
  const float x[] = {1.f, 3.f, 10.f};
  float y[2];
  ref::pool(g, x, y);
  EXPECT_FLOAT_EQ(y[0], 2.f);
  EXPECT_FLOAT_EQ(y[1], 10.f);
}

}  // namespace
}  // namespace kerascpp::kernels
