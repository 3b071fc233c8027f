// Fast transpose, concatenate and tile against their reference kernels, for element sizes 1, 2, 4,
// 8 and an odd 3 (the byte-wise path), random shapes including 0 and 1.
#include "kernels/movement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/ref/ref.h"

namespace kerascpp::kernels {
namespace {

std::vector<unsigned char> random_bytes(std::mt19937& g, size_t n) {
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(g());
  return v;
}

TEST(Transpose, FastMatchesRef) {
  std::mt19937 g(21);
  for (size_t elem : {1, 2, 3, 4, 8}) {
    for (int trial = 0; trial < 60; ++trial) {
      const int rank = static_cast<int>(g() % 6);
      std::vector<int64_t> shape(rank);
      for (auto& s : shape) s = test::random_dim(g, 5);
      std::vector<int> perm(rank);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), g);
      int64_t n = 1;
      for (int64_t s : shape) n *= s;
      std::vector<unsigned char> x = random_bytes(g, n * elem), got(n * elem + 1, 0xAB),
                                 want(n * elem + 1, 0xAB);
      transpose(x.data(), got.data(), elem, shape.data(), perm.data(), rank);
      ref::transpose(x.data(), want.data(), elem, shape.data(), perm.data(), rank);
      ASSERT_EQ(got, want) << "elem " << elem << " trial " << trial;
    }
  }
}

TEST(Concatenate, FastMatchesRef) {
  std::mt19937 g(22);
  for (size_t elem : {1, 3, 4, 8}) {
    for (int trial = 0; trial < 40; ++trial) {
      const int count = 1 + static_cast<int>(g() % 4);
      const int64_t outer = test::random_dim(g, 4), inner = test::random_dim(g, 5);
      std::vector<int64_t> dims(count);
      std::vector<std::vector<unsigned char>> xs;
      std::vector<const void*> ptrs;
      int64_t total = 0;
      for (int t = 0; t < count; ++t) {
        dims[t] = test::random_dim(g, 4);
        total += dims[t];
        xs.push_back(random_bytes(g, outer * dims[t] * inner * elem));
        ptrs.push_back(xs.back().data());
      }
      const size_t n = outer * total * inner * elem;
      std::vector<unsigned char> got(n + 1, 0xAB), want(n + 1, 0xAB);
      concatenate(ptrs.data(), dims.data(), count, got.data(), elem, outer, inner);
      ref::concatenate(ptrs.data(), dims.data(), count, want.data(), elem, outer, inner);
      ASSERT_EQ(got, want) << "elem " << elem << " trial " << trial;
    }
  }
}

TEST(Tile, FastMatchesRef) {
  std::mt19937 g(23);
  for (size_t elem : {1, 2, 3, 4, 8}) {
    for (int trial = 0; trial < 60; ++trial) {
      const int rank = static_cast<int>(g() % 5);
      std::vector<int64_t> shape(rank), reps(rank);
      int64_t n_in = 1, n_out = 1;
      for (int d = 0; d < rank; ++d) {
        shape[d] = test::random_dim(g, 4);
        reps[d] = test::random_dim(g, 3);
        n_in *= shape[d];
        n_out *= shape[d] * reps[d];
      }
      std::vector<unsigned char> x = random_bytes(g, n_in * elem), got(n_out * elem + 1, 0xAB),
                                 want(n_out * elem + 1, 0xAB);
      tile(x.data(), got.data(), elem, shape.data(), reps.data(), rank);
      ref::tile(x.data(), want.data(), elem, shape.data(), reps.data(), rank);
      ASSERT_EQ(got, want) << "elem " << elem << " trial " << trial;
    }
  }
}

}  // namespace
}  // namespace kerascpp::kernels
