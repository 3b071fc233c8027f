// The choice of a kernel set per instruction set (kernels/isa.h): every set this CPU runs against the
// reference kernels in one process, and KERASCPP_MAX_ISA honoured (ctest runs this binary once per
// cap; the other kernel tests then check the capped set).
#include "kernels/isa.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "kerascpp/error.h"
#include "kernel_test_util.h"
#include "kernels/ref/ref.h"

namespace kerascpp::kernels {
namespace {

TEST(Isa, RunnableSetsStartWithTheBaselineAndIncludeTheActiveOne) {
  auto sets = runnable_isa_kernels();
  ASSERT_FALSE(sets.empty());
  EXPECT_EQ(sets.front()->isa, Isa::baseline);
  bool active_listed = false;
  for (size_t i = 0; i < sets.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(sets[i - 1]->isa, sets[i]->isa);
    }
    active_listed = active_listed || sets[i] == &isa_kernels();
  }
  EXPECT_TRUE(active_listed) << isa_choice();
  EXPECT_EQ(isa_choice().rfind(isa_kernels().name, 0), 0u) << isa_choice();
}

TEST(Isa, MaxIsaCapsTheChoice) {
  const char* cap = std::getenv("KERASCPP_MAX_ISA");
  if (cap == nullptr || *cap == 0) GTEST_SKIP() << "no cap set: " << isa_choice();
  EXPECT_LE(isa_kernels().isa, parse_isa(cap)) << isa_choice();
  EXPECT_NE(isa_choice().find(std::string("KERASCPP_MAX_ISA=") + cap), std::string::npos) << isa_choice();
}

TEST(Isa, ParsesNamesAndLevelsAndNamesABadValue) {
  EXPECT_EQ(parse_isa("baseline"), Isa::baseline);
  EXPECT_EQ(parse_isa("x86-64-v2"), Isa::baseline);
  EXPECT_EQ(parse_isa("AVX2"), Isa::avx2);
  EXPECT_EQ(parse_isa("x86-64-v3"), Isa::avx2);
  EXPECT_EQ(parse_isa("avx512"), Isa::avx512);
  EXPECT_EQ(parse_isa("X86-64-V4"), Isa::avx512);
  try {
    parse_isa("avx1024");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("KERASCPP_MAX_ISA=avx1024"), std::string::npos) << e.what();
  }
}

// Every set, called through its table, on sizes that take the vector loops and their remainders.
// Bounds: a float32 sum of k products of values in [-1, 1] is off by at most about k * eps * k
// (eps = 6e-8; k <= 67 here: 2.7e-4 <= 1e-5 * k); sigmoid and softmax, whose values lie in [0, 1],
// by a few ulps of float32 (1e-6 is 16 ulps at 1).
TEST(Isa, EverySetMatchesTheReferenceKernels) {
  std::mt19937 g(11);
  for (const IsaKernels* set : runnable_isa_kernels()) {
    for (int64_t n : {1, 7, 8, 17, 33}) {
      const int64_t m = n + 2, k = 2 * n + 1;
      auto a = test::random_floats(g, m * k), b = test::random_floats(g, k * n);
      std::vector<float> c(m * n), want(m * n);
      set->matmul_small(a.data(), b.data(), c.data(), m, n, k);
      ref::matmul(a.data(), b.data(), want.data(), m, n, k);
      for (int64_t i = 0; i < m * n; ++i)
        ASSERT_NEAR(c[i], want[i], 1e-5 * k) << set->name << " matmul_small " << m << "x" << n << "x" << k;
      auto x = test::random_floats(g, m * k, -4.f, 4.f);
      std::vector<float> y(x.size()), yr(x.size());
      set->unary(Unary::sigmoid, x.data(), y.data(), int64_t(x.size()), 0.f);
      ref::unary(Unary::sigmoid, x.data(), yr.data(), int64_t(x.size()), 0.f);
      for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y[i], yr[i], 1e-6) << set->name << " sigmoid";
      set->softmax(x.data(), y.data(), m, k, 1);
      ref::softmax(x.data(), yr.data(), m, k, 1);
      for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y[i], yr[i], 1e-6) << set->name << " softmax";
    }
  }
}

// tanh (kernels/isa/fast_math.h: a fitted rational function) on every set, against tanh in double:
// every 61st float from 0 to 10 (tanh is 1 in float from 9.01) and its negation, and the special
// values, in one array so that they take the vector loops too. Bound: 3.2e-7 relative measured over
// every float with fused multiply-adds, 3.8e-7 without (the baseline set); 5e-7 holds both.
TEST(Isa, EverySetsTanhIsWithin5e7OfTanhInDouble) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {nan, inf, -inf, 0.f, -0.f, 1e30f, -1e30f, std::numeric_limits<float>::denorm_min()};
  for (uint32_t bits = 0; bits <= std::bit_cast<uint32_t>(10.f); bits += 61) {
    x.push_back(std::bit_cast<float>(bits));
    x.push_back(-std::bit_cast<float>(bits));
  }
  std::vector<float> y(x.size());
  for (const IsaKernels* set : runnable_isa_kernels()) {
    set->unary(Unary::tanh, x.data(), y.data(), int64_t(x.size()), 0.f);
    EXPECT_TRUE(std::isnan(y[0])) << set->name;
    EXPECT_EQ(y[1], 1.f) << set->name;
    EXPECT_EQ(y[2], -1.f) << set->name;
    EXPECT_TRUE(y[3] == 0.f && !std::signbit(y[3]) && y[4] == 0.f && std::signbit(y[4])) << set->name;
    EXPECT_EQ(y[5], 1.f) << set->name;
    EXPECT_EQ(y[6], -1.f) << set->name;
    double worst = 0;
    for (size_t i = 1; i < x.size(); ++i) {
      const double want = std::tanh(double(x[i]));
      ASSERT_LE(std::fabs(y[i]), 1.f) << set->name << " x=" << x[i];
      if (want != 0) worst = std::max(worst, std::fabs(y[i] - want) / std::fabs(want));
    }
    EXPECT_LT(worst, 5e-7) << set->name;
  }
}

// gelu's tanh form, 0.5 v (1 + tanh u) with u = sqrt(2 / pi) (v + 0.044715 v^3), computed as
// v sigmoid(2u), and its gradient, against long double on [-9.5, 10]. Where tanh u is near -1 the
// value is tiny and 1 + tanh u in float would lose it all (1 + tanh u is 0 in float below u = -9);
// here the error is u's own rounding in float (a few roundings of 6e-8), amplified by exp: |2u|
// times that, 1.2e-5 measured at v = -9.36 (u = -37) without fused multiply-adds; 3e-5 holds it.
TEST(Isa, EverySetsGeluApproximateKeepsItsRelativeErrorWhereTanhIsNearMinusOne) {
  std::vector<float> x;
  for (float v = -9.5f; v <= 10.f; v += 0.0137f) x.push_back(v);
  std::vector<float> y(x.size()), dy(x.size(), 1.f), dx(x.size());
  for (const IsaKernels* set : runnable_isa_kernels()) {
    set->unary(Unary::gelu_approximate, x.data(), y.data(), int64_t(x.size()), 0.f);
    set->unary_grad(Unary::gelu_approximate, x.data(), y.data(), dy.data(), dx.data(), int64_t(x.size()), 0.f);
    for (size_t i = 0; i < x.size(); ++i) {
      const long double v = x[i], k = 0.79788456080286535587989211986876L;
      // 1 + tanh u and 1 - tanh^2 u in forms without cancellation in long double either:
      // 2 / (1 + exp(-2u)) and 1 / cosh^2 u.
      const long double u = k * (v + 0.044715L * v * v * v), half_one_plus_t = 1 / (1 + std::exp(-2 * u));
      const long double sech2 = 1 / (std::cosh(u) * std::cosh(u));
      const long double want = v * half_one_plus_t;
      const long double want_grad = half_one_plus_t + 0.5L * v * sech2 * k * (1 + 3 * 0.044715L * v * v);
      ASSERT_LE(std::fabs((y[i] - want) / want), 3e-5L) << set->name << " gelu x=" << x[i] << " got " << y[i];
      if (std::fabs(want_grad) > 1e-30L)
        ASSERT_LE(std::fabs((dx[i] - want_grad) / want_grad), 3e-5L)
            << set->name << " gelu gradient x=" << x[i] << " got " << dx[i] << " want " << double(want_grad);
    }
  }
}

// Adam's update (kernels/optimizer.h) on every set, with and without amsgrad, on lengths that take
// the vector loops and their remainders: the same bits as the baseline set (built without fused
// multiply-adds, as every set's copy of this kernel; IEEE sqrt and division are exact on all).
TEST(Isa, EverySetsAdamUpdateGivesTheBaselinesBits) {
  std::mt19937 rng(3);
  const AdamStep s{0.1f, 0.001f, 0.0123f, 1e-7f};
  for (const bool amsgrad : {false, true})
    for (int64_t n : {1, 15, 16, 33, 1000}) {
      const auto g = test::random_floats(rng, n), x = test::random_floats(rng, n);
      const auto m = test::random_floats(rng, n), v = test::random_floats(rng, n, 0.f, 1.f);
      const auto vhat = test::random_floats(rng, n, 0.f, 1.f);
      std::vector<std::vector<float>> want;
      for (const IsaKernels* set : runnable_isa_kernels()) {
        auto xs = x, ms = m, vs = v, vh = vhat;
        set->adam_update(g.data(), xs.data(), ms.data(), vs.data(), amsgrad ? vh.data() : nullptr, n, s);
        if (want.empty()) want = {xs, ms, vs, vh};
        EXPECT_EQ(xs, want[0]) << set->name << " n=" << n << " amsgrad=" << amsgrad;
        EXPECT_EQ(ms, want[1]) << set->name;
        EXPECT_EQ(vs, want[2]) << set->name;
        EXPECT_EQ(vh, want[3]) << set->name;
      }
    }
}

}  // namespace
}  // namespace kerascpp::kernels
