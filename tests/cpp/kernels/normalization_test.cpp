// Fast batch_normalization, layer_normalization and group_normalization against their reference
// kernels, with and without gamma / beta, over shapes that include 0, 1 and strided statistics
// beyond one stack chunk (inner > 64).
#include "kernels/normalization.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace kerascpp::kernels {
namespace {

void expect_all_close(const std::vector<float>& got, const std::vector<float>& want, double atol, double rtol,
                      const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(test::close(got[i], want[i], atol, rtol)) << what << " i=" << i << " got " << got[i] << " want " << want[i];
}

TEST(BatchNormalization, FastMatchesRef) {
  std::mt19937 g(21);
  std::vector<std::vector<int64_t>> dims = {{1, 1, 1}, {0, 3, 2}, {2, 0, 2}, {3, 4, 0}, {5, 7, 1}, {2, 3, 130}};
  for (int i = 0; i < 30; ++i) dims.push_back({test::random_dim(g, 6), test::random_dim(g, 20), test::random_dim(g, 40)});
  for (const auto& d : dims) {
    const int64_t n = d[0] * d[1] * d[2];
    auto x = test::random_floats(g, n, -3.f, 3.f), scale = test::random_floats(g, d[1]), shift = test::random_floats(g, d[1]);
    std::vector<float> got(n, NAN), want(n, NAN);
    batch_normalization(x.data(), got.data(), scale.data(), shift.data(), d[0], d[1], d[2]);
    ref::batch_normalization(x.data(), want.data(), scale.data(), shift.data(), d[0], d[1], d[2]);
    expect_all_close(got, want, 1e-6, 1e-6, "batch_normalization");
  }
}

TEST(LayerNormalization, FastMatchesRef) {
  std::mt19937 g(22);
  std::vector<std::vector<int64_t>> dims = {{1, 1, 1}, {0, 3, 2}, {2, 0, 2}, {3, 4, 0}, {4, 33, 1}, {2, 5, 130}};
  for (int i = 0; i < 30; ++i) dims.push_back({test::random_dim(g, 6), test::random_dim(g, 40), test::random_dim(g, 70)});
  for (const auto& d : dims) {
    const int64_t n = d[0] * d[1] * d[2];
    // An offset mean checks that the variance is centred (no E[x^2] - E[x]^2 cancellation).
    auto x = test::random_floats(g, n, 4.f, 6.f), gamma = test::random_floats(g, d[1]), beta = test::random_floats(g, d[1]);
    for (int variant = 0; variant < 5; ++variant) {
      const bool rms = variant == 4;
      const float* gp = (variant & 1) ? nullptr : gamma.data();
      const float* bp = (variant & 2) ? nullptr : beta.data();
      std::vector<float> got(n, NAN), want(n, NAN);
      layer_normalization(x.data(), got.data(), gp, bp, d[0], d[1], d[2], 1e-3f, rms);
      ref::layer_normalization(x.data(), want.data(), gp, bp, d[0], d[1], d[2], 1e-3f, rms);
      expect_all_close(got, want, 1e-5, 1e-4, "layer_normalization variant " + std::to_string(variant));
    }
  }
}

TEST(GroupNormalization, FastMatchesRef) {
  std::mt19937 g(23);
  std::vector<std::vector<int64_t>> dims = {{1, 1, 1, 1, 1}, {0, 2, 2, 2, 2}, {2, 0, 2, 3, 1}, {2, 3, 2, 2, 0},
                                            {2, 5, 4, 3, 1}, {2, 1, 3, 2, 70}};
  for (int i = 0; i < 30; ++i)
    dims.push_back({test::random_dim(g, 3), test::random_dim(g, 8), test::random_dim(g, 4), test::random_dim(g, 5),
                    test::random_dim(g, 9)});
  for (const auto& d : dims) {
    const int64_t n = d[0] * d[1] * d[2] * d[3] * d[4], c = d[2] * d[3];
    auto x = test::random_floats(g, n, -2.f, 5.f), gamma = test::random_floats(g, c), beta = test::random_floats(g, c);
    for (int variant = 0; variant < 4; ++variant) {
      const float* gp = (variant & 1) ? nullptr : gamma.data();
      const float* bp = (variant & 2) ? nullptr : beta.data();
      std::vector<float> got(n, NAN), want(n, NAN);
      group_normalization(x.data(), got.data(), gp, bp, d[0], d[1], d[2], d[3], d[4], 1e-3f);
      ref::group_normalization(x.data(), want.data(), gp, bp, d[0], d[1], d[2], d[3], d[4], 1e-3f);
      expect_all_close(got, want, 1e-5, 1e-4, "group_normalization variant " + std::to_string(variant));
    }
  }
}

}  // namespace
}  // namespace kerascpp::kernels
