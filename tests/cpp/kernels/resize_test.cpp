// Fast resize kernels (nearest, bilinear, bicubic) against ref::resize on random image sizes, up and
// down, including 1-pixel images and 0-sized batches / channels.
#include "kernels/resize.h"

#include <gtest/gtest.h>

#include <vector>

#include "kernel_test_util.h"
#include "kernels/ref/spatial.h"

namespace kerascpp::kernels {
namespace {

using Fast = void (*)(const float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);

void check(Fast fast, int method, unsigned seed) {
  std::mt19937 g(seed);
  for (int trial = 0; trial < 120; ++trial) {
    const int64_t n = test::random_dim(g, 3), c = test::random_dim(g, 4);
    const int64_t h = 1 + g() % 7, w = 1 + g() % 7, oh = 1 + g() % 11, ow = 1 + g() % 11;
    std::vector<float> x = test::random_floats(g, n * h * w * c);
    std::vector<float> got(n * oh * ow * c + 1, 7.f), want(n * oh * ow * c + 1, 7.f);
    fast(x.data(), got.data(), n, h, w, c, oh, ow);
    ref::resize(x.data(), want.data(), n, h, w, c, oh, ow, method);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_TRUE(test::close(got[i], want[i], 1e-6, 1e-5))
          << "method " << method << " trial " << trial << " (" << h << "x" << w << " -> " << oh << "x" << ow
          << ") at " << i << ": " << got[i] << " vs " << want[i];
  }
}

TEST(ResizeNearest, FastMatchesRef) { check(resize_nearest, 0, 41); }
TEST(ResizeBilinear, FastMatchesRef) { check(resize_bilinear, 1, 42); }
TEST(ResizeBicubic, FastMatchesRef) { check(resize_bicubic, 2, 43); }

// Same size: every method is the identity (TF's half-pixel taps land on the pixel centres).
TEST(Resize, SameSizeIsIdentity) {
  std::mt19937 g(44);
  std::vector<float> x = test::random_floats(g, 2 * 5 * 4 * 3), y(x.size());
  for (Fast f : {resize_nearest, resize_bilinear, resize_bicubic}) {
    f(x.data(), y.data(), 2, 5, 4, 3, 5, 4);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y[i], x[i], 1e-6) << i;
  }
}

}  // namespace
}  // namespace kerascpp::kernels
