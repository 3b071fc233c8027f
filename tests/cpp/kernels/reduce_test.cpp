// Fast softmax, log_softmax, sum and l2_normalize against their reference kernels, over
// (outer, axis, inner) shapes that include 0, 1 and inner beyond one stack chunk (64).
#include "kernels/reduce.h"

#include <gtest/gtest.h>

#include <vector>

#include "kernel_test_util.h"
#include "kernels/ref/ref.h"

namespace kerascpp::kernels {
namespace {

struct Dims {
  int64_t outer, axis, inner;
};

std::vector<Dims> shapes(std::mt19937& g) {
  std::vector<Dims> out = {{1, 1, 1}, {0, 5, 3}, {2, 0, 3}, {3, 7, 0}, {1, 10, 1}, {2, 3, 130}, {1, 1000, 1}};
  for (int i = 0; i < 40; ++i)
    out.push_back({test::random_dim(g, 5), test::random_dim(g, 40), test::random_dim(g, 70)});
  return out;
}

using AxisFn = void (*)(const float*, float*, int64_t, int64_t, int64_t);

void check(AxisFn fast, AxisFn reference, bool reduces, const char* name, float lo, float hi, double atol,
           double rtol) {
  std::mt19937 g(11);
  for (const Dims& d : shapes(g)) {
    const int64_t n = d.outer * d.axis * d.inner, out_n = reduces ? d.outer * d.inner : n;
    std::vector<float> x = test::random_floats(g, n, lo, hi), got(out_n, NAN), want(out_n, NAN);
    fast(x.data(), got.data(), d.outer, d.axis, d.inner);
    reference(x.data(), want.data(), d.outer, d.axis, d.inner);
    for (int64_t i = 0; i < out_n; ++i)
      ASSERT_TRUE(test::close(got[i], want[i], atol, rtol))
          << name << " (" << d.outer << ", " << d.axis << ", " << d.inner << ") i=" << i << " got " << got[i]
          << " want " << want[i];
  }
}

TEST(Softmax, FastMatchesRef) { check(softmax, ref::softmax, false, "softmax", -5.f, 5.f, 1e-7, 1e-5); }

// Logits far beyond exp's float range must not overflow: both subtract the maximum.
TEST(Softmax, LargeLogitsStayFinite) {
  check(softmax, ref::softmax, false, "softmax", 1000.f, 1010.f, 1e-7, 1e-5);
  check(log_softmax, ref::log_softmax, false, "log_softmax", -1010.f, -1000.f, 1e-5, 1e-5);
}

TEST(LogSoftmax, FastMatchesRef) {
  check(log_softmax, ref::log_softmax, false, "log_softmax", -5.f, 5.f, 1e-5, 1e-5);
}

TEST(Sum, FastMatchesRef) { check(sum, ref::sum, true, "sum", -1.f, 1.f, 1e-5, 1e-5); }

TEST(L2Normalize, FastMatchesRef) {
  auto fast = [](const float* x, float* y, int64_t o, int64_t a, int64_t i) {
    l2_normalize(x, y, o, a, i, 1e-12f);
  };
  auto reference = [](const float* x, float* y, int64_t o, int64_t a, int64_t i) {
    ref::l2_normalize(x, y, o, a, i, 1e-12f);
  };
  check(fast, reference, false, "l2_normalize", -2.f, 2.f, 1e-7, 1e-5);
}

}  // namespace
}  // namespace kerascpp::kernels
