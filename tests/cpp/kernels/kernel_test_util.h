// Helpers for the kernel tests: seeded random data and a closeness check that treats NaN == NaN
// and equal infinities as equal (fast and reference kernels must agree on those too).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kerascpp::test {

inline std::vector<float> random_floats(std::mt19937& g, size_t n, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(g);
  return v;
}

inline int64_t random_dim(std::mt19937& g, int64_t max_dim) {
  // Sizes 0 and 1 are the edge cases every kernel must handle; give them a fair share.
  std::uniform_int_distribution<int> pick(0, 9);
  int p = pick(g);
  if (p == 0) return 0;
  if (p <= 2) return 1;
  return std::uniform_int_distribution<int64_t>(2, max_dim)(g);
}

inline bool close(double got, double want, double atol, double rtol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

}  // namespace kerascpp::test
