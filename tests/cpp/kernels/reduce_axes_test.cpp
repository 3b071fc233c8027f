// Fast reduce_max / reduce_mean along the middle axis against their references, with inner == 1
// (the contiguous path), inner > 64 (several chunks) and empty axes.
#include "kernels/reduce_axes.h"

#include <gtest/gtest.h>

#include <vector>

#include "kernel_test_util.h"
#include "kernels/ref/spatial.h"

namespace kerascpp::kernels {
namespace {

TEST(ReduceAxes, FastMatchesRef) {
  std::mt19937 g(51);
  for (int trial = 0; trial < 120; ++trial) {
    const int64_t outer = test::random_dim(g, 4), axis = test::random_dim(g, 20);
    const int64_t inner = trial % 3 == 0 ? 1 : trial % 3 == 1 ? test::random_dim(g, 9) : 60 + g() % 80;
    std::vector<float> x = test::random_floats(g, outer * axis * inner, -10.f, 10.f);
    for (int which = 0; which < 2; ++which) {
      std::vector<float> got(outer * inner + 1, 7.f), want(outer * inner + 1, 7.f);
      if (which == 0) {
        reduce_max(x.data(), got.data(), outer, axis, inner);
        ref::reduce_max(x.data(), want.data(), outer, axis, inner);
      } else {
        reduce_mean(x.data(), got.data(), outer, axis, inner);
        ref::reduce_mean(x.data(), want.data(), outer, axis, inner);
      }
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_TRUE(test::close(got[i], want[i], 1e-6, 1e-6))
            << (which ? "mean" : "max") << " trial " << trial << " at " << i << ": " << got[i] << " vs "
            << want[i];
    }
  }
}

}  // namespace
}  // namespace kerascpp::kernels
