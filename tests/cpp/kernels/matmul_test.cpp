// Every matmul candidate against ref::matmul, the dispatch (first candidate that takes a problem), and
// concurrent use.
#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/isa.h"
#include "kernels/ref/ref.h"

namespace kerascpp::kernels {
namespace {

using Fn = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t);

// |c - ref| within float rounding of the sum of |a_ip * b_pj| (the scale of the rounding error).
void expect_matches_ref(Fn fn, const char* name, int64_t m, int64_t n, int64_t k, std::mt19937& g) {
  std::vector<float> a = test::random_floats(g, m * k), b = test::random_floats(g, k * n);
  std::vector<float> c(m * n + 1, NAN), want(m * n + 1, -7.f);
  c[m * n] = want[m * n] = 123.f;  // a guard element: nothing may write past the end
  fn(a.data(), b.data(), c.data(), m, n, k);
  ref::matmul(a.data(), b.data(), want.data(), m, n, k);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double scale = 0;
      for (int64_t p = 0; p < k; ++p) scale += std::fabs(double(a[i * k + p]) * b[p * n + j]);
      ASSERT_NEAR(c[i * n + j], want[i * n + j], 1e-6 * (scale + 1) * (k + 1))
          << name << " m=" << m << " n=" << n << " k=" << k << " at (" << i << ", " << j << ")";
    }
  }
  ASSERT_EQ(c[m * n], 123.f) << name << " wrote past the end";
}

TEST(Matmul, EveryCandidateMatchesRefOverManySizes) {
  std::mt19937 g(42);
  const int64_t dims[] = {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33};
  for (int64_t m : dims)
    for (int64_t n : dims)
      for (int64_t k : {0, 1, 3, 8, 17}) {
        for (const MatmulCandidate& c : matmul_candidates()) expect_matches_ref(c.run, c.name, m, n, k, g);
        expect_matches_ref(matmul, "dispatch", m, n, k, g);
      }
}

TEST(Matmul, LargerAndRandomSizesMatchRef) {
  std::mt19937 g(7);
  // k beyond the 256 block of the small kernel, n beyond one 16-column panel, m beyond 6-row blocks.
  expect_matches_ref(matmul_small, "small", 13, 70, 300, g);
  expect_matches_ref(matmul_blas, "blas", 13, 70, 300, g);
  expect_matches_ref(matmul_small, "small", 1, 8, 10, g);
  for (int t = 0; t < 30; ++t) {
    int64_t m = test::random_dim(g, 40), n = test::random_dim(g, 40), k = test::random_dim(g, 70);
    expect_matches_ref(matmul_small, "small", m, n, k, g);
    expect_matches_ref(matmul_blas, "blas", m, n, k, g);
  }
}

// matmul_bias is matmul, then bias_add, then relu, bit for bit (the inference plan's Dense relies on
// it to equal the interpreter), on every instruction set's small kernel and on the BLAS path: sizes
// with edge panels, k past the small kernel's 256 block (the epilogue only on the last block), k = 0,
// and m*n*k past the small path's limit.
TEST(Matmul, BiasAndReluEpilogueEqualsSeparatePasses) {
  std::mt19937 g(5);
  struct Size {
    int64_t m, n, k;
  };
  for (const Size& s : {Size{1, 10, 8}, Size{1024, 10, 8}, Size{1024, 1, 10}, Size{7, 33, 300},
                        Size{5, 16, 0}, Size{300, 130, 70}, Size{200, 150, 120}, Size{1024, 256, 128}}) {
    std::vector<float> a = test::random_floats(g, s.m * s.k), b = test::random_floats(g, s.k * s.n),
                       bias = test::random_floats(g, s.n);
    for (bool relu : {false, true})
      for (const float* bp : {static_cast<const float*>(bias.data()), static_cast<const float*>(nullptr)}) {
        std::vector<float> want(s.m * s.n);
        matmul(a.data(), b.data(), want.data(), s.m, s.n, s.k);
        for (int64_t i = 0; i < s.m * s.n; ++i) {
          if (bp) want[i] = want[i] + bp[i % s.n];
          if (relu) want[i] = want[i] < 0.f ? 0.f : want[i];
        }
        std::vector<float> got(s.m * s.n + 1, NAN);
        got.back() = 123.f;
        matmul_bias(a.data(), b.data(), bp, relu, got.data(), s.m, s.n, s.k);
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)))
            << "matmul_bias " << s.m << "x" << s.n << "x" << s.k << " relu=" << relu << " bias=" << (bp != nullptr);
        EXPECT_EQ(got.back(), 123.f);
        if (s.m * s.n * s.k > kMatmulSmallMaxWork) continue;
        for (const IsaKernels* set : runnable_isa_kernels()) {
          set->matmul_small(a.data(), b.data(), want.data(), s.m, s.n, s.k);
          for (int64_t i = 0; i < s.m * s.n; ++i) {
            if (bp) want[i] = want[i] + bp[i % s.n];
            if (relu) want[i] = want[i] < 0.f ? 0.f : want[i];
          }
          set->matmul_small_bias(a.data(), b.data(), bp, relu, got.data(), s.m, s.n, s.k);
          EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)))
              << set->name << " " << s.m << "x" << s.n << "x" << s.k << " relu=" << relu;
        }
      }
  }
}

// A row comes out the same whatever the batch it is in, up to a register block of rows (AVX-512 runs
// one row of up to 16 columns in a register of its own, and batches of more than 6 rows in blocks of
// 32 columns in two 16-lane registers: the same operations in the same order), across the k blocks of
// 256 and the last, masked columns of each block.
TEST(Matmul, OneRowIsBitIdenticalToTheSameRowInABatch) {
  std::mt19937 g(5);
  for (const IsaKernels* set : runnable_isa_kernels())
    for (int64_t m : {2, 7, 13, 37})
      for (int64_t n : {1, 5, 8, 15, 16, 17, 31, 32, 33, 64, 70})
        for (int64_t k : {1, 9, 256, 300})
          for (bool relu : {false, true}) {
            auto a = test::random_floats(g, m * k), b = test::random_floats(g, k * n),
                 bias = test::random_floats(g, n);
            a[0] = -0.f;  // relu keeps -0 and NaN as the batch does
            if (k > 1) a[1] = NAN;
            std::vector<float> batch(m * n), row(n);
            for (bool with_bias : {true, false}) {
              if (with_bias)
                set->matmul_small_bias(a.data(), b.data(), bias.data(), relu, batch.data(), m, n, k);
              else
                set->matmul_small(a.data(), b.data(), batch.data(), m, n, k);
              for (int64_t i = 0; i < m; i += std::max<int64_t>(1, m / 5)) {
                if (with_bias)
                  set->matmul_small_bias(a.data() + i * k, b.data(), bias.data(), relu, row.data(), 1, n, k);
                else
                  set->matmul_small(a.data() + i * k, b.data(), row.data(), 1, n, k);
                ASSERT_EQ(0, std::memcmp(row.data(), batch.data() + i * n, n * sizeof(float)))
                    << set->name << " row " << i << " of " << m << "x" << n << "x" << k << " relu=" << relu
                    << " bias=" << with_bias;
              }
            }
          }
}

// One row against a b of 64 KB or more streams b row after row into a slab of 1,024 columns'
// accumulators: the same operations in the same order as the batch's blocks, so the same bits, across
// k blocks, slabs and the columns after the last whole vector (OneRowIsBitIdentical... covers the
// smaller sizes on either side of 64 KB).
TEST(Matmul, OneRowAgainstABigKernelIsBitIdenticalToTheSameRowInABatch) {
  std::mt19937 g(6);
  struct Size {
    int64_t n, k;
  };
  for (const IsaKernels* set : runnable_isa_kernels())
    for (const Size& s : {Size{1000, 300}, Size{1030, 257}, Size{2053, 130}, Size{262144, 1}, Size{16, 1100},
                          Size{10, 2000}})  // the last: fewer columns than a register block, not streamed
      for (bool relu : {false, true}) {
        const int64_t m = 7;
        auto a = test::random_floats(g, m * s.k), b = test::random_floats(g, s.k * s.n),
             bias = test::random_floats(g, s.n);
        a[0] = -0.f;  // relu keeps -0 and NaN as the batch does
        if (s.k > 1) a[1] = NAN;
        std::vector<float> batch(m * s.n), row(s.n);
        set->matmul_small_bias(a.data(), b.data(), bias.data(), relu, batch.data(), m, s.n, s.k);
        for (int64_t i : {0, 3, 6}) {
          set->matmul_small_bias(a.data() + i * s.k, b.data(), bias.data(), relu, row.data(), 1, s.n, s.k);
          ASSERT_EQ(0, std::memcmp(row.data(), batch.data() + i * s.n, s.n * sizeof(float)))
              << set->name << " row " << i << " of " << m << "x" << s.n << "x" << s.k << " relu=" << relu;
        }
      }
}

// The sets with fused multiply-adds (AVX2's 8-lane blocks, AVX-512's 16-lane ones) give the same bits
// for the same product: each element's operations, in the same order (the baseline set has no FMA).
TEST(Matmul, TheSetsWithFmaGiveTheSameBits) {
  std::mt19937 g(8);
  std::vector<const IsaKernels*> fma;
  for (const IsaKernels* set : runnable_isa_kernels())
    if (std::string(set->name).rfind("baseline", 0) != 0) fma.push_back(set);
  if (fma.size() < 2) GTEST_SKIP() << "this CPU runs fewer than two sets with FMA";
  for (int64_t m : {1, 3, 7, 13, 37})
    for (int64_t n : {1, 10, 16, 17, 32, 33, 64, 70})
      for (int64_t k : {1, 9, 64, 300}) {
        auto a = test::random_floats(g, m * k), b = test::random_floats(g, k * n),
             bias = test::random_floats(g, n);
        std::vector<float> want(m * n), got(m * n);
        fma[0]->matmul_small_bias(a.data(), b.data(), bias.data(), true, want.data(), m, n, k);
        for (size_t s = 1; s < fma.size(); ++s) {
          fma[s]->matmul_small_bias(a.data(), b.data(), bias.data(), true, got.data(), m, n, k);
          ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
              << fma[0]->name << " against " << fma[s]->name << " " << m << "x" << n << "x" << k;
        }
      }
}

TEST(Matmul, ZeroKWritesZeros) {
  for (const MatmulCandidate& cand : matmul_candidates()) {
    std::vector<float> c(6, NAN);
    cand.run(nullptr, nullptr, c.data(), 2, 3, 0);
    for (float v : c) EXPECT_EQ(v, 0.f) << cand.name;
  }
  std::vector<float> c(6, NAN);
  matmul(nullptr, nullptr, c.data(), 2, 3, 0);
  for (float v : c) EXPECT_EQ(v, 0.f);
}

TEST(Matmul, CandidatesFastestFirstRefLastAndSayWhy) {
  auto list = matmul_candidates();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_STREQ(list[0].name, "small");
  EXPECT_STREQ(list[1].name, "blas");
  EXPECT_STREQ(list.back().name, "ref");
  EXPECT_EQ(list.back().refuses, nullptr);  // the definition takes every problem
  EXPECT_STREQ(matmul_choice(1, 10, 8).candidate->name, "small");
  EXPECT_EQ(matmul_choice(1, 10, 8).refusals, "");
  EXPECT_STREQ(matmul_choice(128, 128, 128).candidate->name, "small");
  EXPECT_STREQ(matmul_choice(129, 129, 129).candidate->name, "blas");
  EXPECT_STREQ(matmul_choice(1024, 128, 128).candidate->name, "small");  // b of 128^2 floats stays in L2
  EXPECT_STREQ(matmul_choice(1024, 129, 128).candidate->name, "blas");
  EXPECT_STREQ(matmul_choice(1025, 128, 128).candidate->name, "blas");  // OpenBLAS's threads split m
  EXPECT_EQ(matmul_choice(256, 512, 512).refusals.rfind("small: m*n*k > 2097152 (128^3)", 0), 0u);
  // n beyond cblas's int: only the reference takes it (not run: the sizes are only for the choice).
  const MatmulChoice huge = matmul_choice(1, int64_t{1} << 32, 1);
  EXPECT_STREQ(huge.candidate->name, "ref");
  EXPECT_NE(huge.refusals.find("blas: n or k > INT_MAX"), std::string::npos) << huge.refusals;
}

// predict runs from many threads at once; both paths must stay correct under that.
TEST(Matmul, ConcurrentCallsAgree) {
  struct Case {
    int64_t m, n, k;
  };
  const Case cases[] = {{1, 10, 8}, {8, 33, 17}, {160, 130, 110}};  // small, small, blas
  std::mt19937 g(3);
  std::vector<std::vector<float>> as, bs, wants;
  for (const Case& c : cases) {
    as.push_back(test::random_floats(g, c.m * c.k));
    bs.push_back(test::random_floats(g, c.k * c.n));
    wants.emplace_back(c.m * c.n);
    matmul(as.back().data(), bs.back().data(), wants.back().data(), c.m, c.n, c.k);
  }
  std::vector<int> mismatches(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int it = 0; it < 20; ++it) {
        for (size_t i = 0; i < std::size(cases); ++i) {
          const Case& c = cases[i];
          std::vector<float> out(c.m * c.n);
          matmul(as[i].data(), bs[i].data(), out.data(), c.m, c.n, c.k);
          // A race would leave garbage, far outside rounding differences.
          for (size_t j = 0; j < out.size(); ++j)
            if (!test::close(out[j], wants[i][j], 1e-4, 1e-4)) ++mismatches[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(Matmul, BlasThreadsCanBeSet) {
  const int before = blas_threads();
  EXPECT_GE(before, 1);
  set_blas_threads(1);
  EXPECT_EQ(blas_threads(), 1);
  set_blas_threads(before);
  EXPECT_EQ(blas_threads(), before);
}

}  // namespace
}  // namespace kerascpp::kernels
