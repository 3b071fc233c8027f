// Fast pad, slice and repeat against their reference kernels, for element sizes 1, 3 (byte-wise), 4
// and 8, random shapes with 0 and 1 dims and random pads / windows / repeat counts.
#include "kernels/pad_slice.h"

#include <gtest/gtest.h>

#include <vector>

#include "kernel_test_util.h"
#include "kernels/ref/spatial.h"

namespace kerascpp::kernels {
namespace {

std::vector<unsigned char> random_bytes(std::mt19937& g, size_t n) {
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(g());
  return v;
}

int64_t product(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

TEST(Pad, FastMatchesRef) {
  std::mt19937 g(31);
  for (size_t elem : {1, 3, 4, 8}) {
    for (int trial = 0; trial < 80; ++trial) {
      const int rank = static_cast<int>(g() % 6);
      std::vector<int64_t> shape(rank), before(rank), after(rank), out(rank);
      for (int d = 0; d < rank; ++d) {
        shape[d] = test::random_dim(g, 5);
        before[d] = g() % 3 == 0 ? g() % 3 : 0;  // often unpadded, so trailing dims merge
        after[d] = g() % 3 == 0 ? g() % 3 : 0;
        out[d] = before[d] + shape[d] + after[d];
      }
      // A zero fill pattern takes the memset path, a random one the pattern copy.
      std::vector<unsigned char> fill =
          trial % 2 ? random_bytes(g, elem) : std::vector<unsigned char>(elem, 0);
      const size_t n = product(out) * elem;
      std::vector<unsigned char> x = random_bytes(g, product(shape) * elem), got(n + 1, 0xAB),
                                 want(n + 1, 0xAB);
      pad(x.data(), got.data(), elem, shape.data(), before.data(), after.data(), rank, fill.data());
      ref::pad(x.data(), want.data(), elem, shape.data(), before.data(), after.data(), rank, fill.data());
      ASSERT_EQ(got, want) << "elem " << elem << " trial " << trial;
    }
  }
}

TEST(Slice, FastMatchesRef) {
  std::mt19937 g(32);
  for (size_t elem : {1, 3, 4, 8}) {
    for (int trial = 0; trial < 80; ++trial) {
      const int rank = static_cast<int>(g() % 6);
      std::vector<int64_t> shape(rank), begin(rank), size(rank);
      for (int d = 0; d < rank; ++d) {
        shape[d] = test::random_dim(g, 5);
        const bool whole = g() % 2 == 0;
        begin[d] = whole || shape[d] == 0 ? 0 : g() % shape[d];
        size[d] = whole ? shape[d] : (shape[d] - begin[d] == 0 ? 0 : g() % (shape[d] - begin[d] + 1));
      }
      const size_t n = product(size) * elem;
      std::vector<unsigned char> x = random_bytes(g, product(shape) * elem), got(n + 1, 0xAB),
                                 want(n + 1, 0xAB);
      slice(x.data(), got.data(), elem, shape.data(), begin.data(), size.data(), rank);
      ref::slice(x.data(), want.data(), elem, shape.data(), begin.data(), size.data(), rank);
      ASSERT_EQ(got, want) << "elem " << elem << " trial " << trial;
    }
  }
}

TEST(Repeat, FastMatchesRef) {
  std::mt19937 g(33);
  for (size_t elem : {1, 3, 4, 8}) {
    for (int trial = 0; trial < 80; ++trial) {
      const int rank = static_cast<int>(g() % 6);
      std::vector<int64_t> shape(rank), repeats(rank), out(rank);
      for (int d = 0; d < rank; ++d) {
        shape[d] = test::random_dim(g, 4);
        repeats[d] = g() % 2 ? 1 : g() % 4;  // 0 to 3, 1 often
        out[d] = shape[d] * repeats[d];
      }
      const size_t n = product(out) * elem;
      std::vector<unsigned char> x = random_bytes(g, product(shape) * elem), got(n + 1, 0xAB),
                                 want(n + 1, 0xAB);
      repeat(x.data(), got.data(), elem, shape.data(), repeats.data(), rank);
      ref::repeat(x.data(), want.data(), elem, shape.data(), repeats.data(), rank);
      ASSERT_EQ(got, want) << "elem " << elem << " trial " << trial;
    }
  }
}

}  // namespace
}  // namespace kerascpp::kernels
