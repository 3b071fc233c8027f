// kerascpp's own loops on the engine's threads (kernels/parallel.h): every chunk of [0, n) runs once,
// and the split elementwise kernels and pooling gradient give the bits of one thread.
#include "kernels/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <tuple>
#include <cstring>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/conv.h"
#include "kernels/isa.h"
#include "kernels/matmul.h"
#include "kernels/ref/ref.h"
#include "kerascpp/error.h"
#include "kerascpp/threading.h"

extern "C" int omp_get_max_threads(void);

namespace kerascpp::kernels {
namespace {

TEST(Parallel, EveryIndexRunsOnceInAlignedChunks) {
  for (int64_t n : {int64_t{0}, int64_t{5}, 2 * kElementwiseGrain - 1, 2 * kElementwiseGrain + 3, int64_t{1} << 20}) {
    std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
    std::atomic<int> chunks{0};
    parallel_chunks(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      ++chunks;
      EXPECT_TRUE(b % 16 == 0) << b;
      for (int64_t i = b; i < e; ++i) ++seen[i];
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "n " << n << " index " << i;
    if (n < 2 * kElementwiseGrain) EXPECT_LE(chunks, 1) << n;  // small loops stay on the caller
  }
}

TEST(Parallel, TheThreadCountSetIsTheOneUsed) {
  const int64_t n = int64_t{1} << 20;
  auto chunks = [&] {
    std::atomic<int> count{0};
    parallel_chunks(n, kElementwiseGrain, [&](int64_t, int64_t) { ++count; });
    return count.load();
  };
  set_num_threads(1);
  EXPECT_EQ(num_threads(), 1);
  EXPECT_EQ(chunks(), 1);
  set_num_threads(3);  // more threads than cores is the caller's choice
  EXPECT_EQ(chunks(), 3);
  set_num_threads(0);  // back to the environment's
  EXPECT_EQ(num_threads(), 0);
  EXPECT_EQ(chunks(), std::min<int64_t>(omp_get_max_threads(), n / kElementwiseGrain));
  EXPECT_THROW(set_num_threads(-2), ValueError);
  EXPECT_EQ(num_threads(), 0);
}

TEST(Parallel, SplitKernelsGiveTheBitsOfOneThread) {
  std::mt19937 g(3);
  const int64_t n = (int64_t{1} << 18) + 37;
  const auto x = test::random_floats(g, n, -4.f, 4.f), dy = test::random_floats(g, n);
  std::vector<float> split(n), whole(n);
  for (Unary op : {Unary::sigmoid, Unary::tanh, Unary::relu, Unary::gelu}) {
    unary(op, x.data(), split.data(), n, 0.f);
    isa_kernels().unary(op, x.data(), whole.data(), n, 0.f);
    ASSERT_EQ(0, std::memcmp(split.data(), whole.data(), n * sizeof(float))) << static_cast<int>(op);
    unary_grad(op, x.data(), whole.data(), dy.data(), split.data(), n, 0.f);
    std::vector<float> grad(n);
    isa_kernels().unary_grad(op, x.data(), whole.data(), dy.data(), grad.data(), n, 0.f);
    ASSERT_EQ(0, std::memcmp(split.data(), grad.data(), n * sizeof(float))) << "grad " << static_cast<int>(op);
  }
  // (rows, 64) + a (64,) row broadcast, split by rows.
  const int64_t rows = n / 64, shape[] = {rows, 64}, xs[] = {64, 1}, bs[] = {0, 1};
  binary(Binary::multiply, x.data(), xs, dy.data(), bs, split.data(), shape, 2);
  isa_kernels().binary(Binary::multiply, x.data(), xs, dy.data(), bs, whole.data(), shape, 2);
  ASSERT_EQ(0, std::memcmp(split.data(), whole.data(), rows * 64 * sizeof(float)));
}

TEST(Parallel, PoolingGradientOfManyImagesIsTheReferences) {
  PoolGeometry p;
  p.kind = PoolKind::max;
  p.n = 9, p.c = 16, p.in[1] = p.in[2] = 32, p.k[1] = p.k[2] = 3, p.stride[1] = p.stride[2] = 2;
  p.out[1] = p.out[2] = 15;
  std::mt19937 g(4);
  const auto x = test::random_floats(g, p.n * 32 * 32 * p.c), dy = test::random_floats(g, p.n * 15 * 15 * p.c);
  std::vector<float> got(x.size(), 1.f), want(x.size(), 2.f);
  pool_grad(p, x.data(), dy.data(), got.data());
  ref::pool_grad(p, x.data(), dy.data(), want.data());
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)));
  if (omp_get_max_threads() < 2) GTEST_SKIP() << "one thread here: the split is not exercised";
}

TEST(Parallel, SmallTransposedProductsSplitByRowsGiveTheBitsOfOneThread) {
  // A small CNN's Dense backward: (1600, 128)^T-side and (128, 10) @ (1600, 10)^T, every transpose.
  std::mt19937 g(5);
  for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1600, 10, 128}, {128, 1600, 10}, {37, 19, 23}, {5, 3, 7}}) {
    const auto a = test::random_floats(g, m * k), b = test::random_floats(g, k * n);
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        std::vector<float> split(m * n, 1.f), whole(m * n, 2.f);
        set_num_threads(3);
        matmul_transposed_small(ta, tb, a.data(), b.data(), split.data(), m, n, k);
        set_num_threads(0);
        isa_kernels().matmul_transposed_small_rows(ta, tb, a.data(), b.data(), whole.data(), m, n, k, 0, m);
        ASSERT_EQ(0, std::memcmp(split.data(), whole.data(), whole.size() * sizeof(float))) << m << " " << ta << tb;
        for (const IsaKernels* set : runnable_isa_kernels()) {  // every element, every set's blocking and tails
          std::vector<float> got(m * n, 3.f), odd(m * n, 4.f);
          set->matmul_transposed_small_rows(ta, tb, a.data(), b.data(), got.data(), m, n, k, 0, m);
          const int64_t cut = std::min<int64_t>(3, m);  // a split off the vector blocks: the same bits
          set->matmul_transposed_small_rows(ta, tb, a.data(), b.data(), odd.data(), m, n, k, 0, cut);
          set->matmul_transposed_small_rows(ta, tb, a.data(), b.data(), odd.data(), m, n, k, cut, m);
          ASSERT_EQ(0, std::memcmp(odd.data(), got.data(), got.size() * sizeof(float))) << set->name << " split at 3";
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double want = 0;
              for (int64_t p = 0; p < k; ++p)
                want += double(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
              ASSERT_NEAR(got[i * n + j], want, 1e-5 * k * std::max(1.0, std::fabs(want)))
                  << set->name << " " << m << "x" << n << "x" << k << " " << ta << tb << " at " << i << "," << j;
            }
        }
      }
  }
}

}  // namespace
}  // namespace kerascpp::kernels
