// Helpers for the op tests: seeded random tensors and shapes, element-by-element comparison with a
// double-precision expectation, and the message of an expected ValueError.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kerascpp/tensor.h"

namespace kerascpp::test {

inline Tensor random_tensor(std::mt19937& g, const Shape& shape, float lo = -1.f, float hi = 1.f) {
  Tensor t = Tensor::empty(shape);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = u(g);
  return t;
}

inline Tensor int_tensor(const Shape& shape, int32_t start = 0) {
  Tensor t = Tensor::empty(shape, DType::int32);
  for (int64_t i = 0; i < t.size(); ++i) t.data<int32_t>()[i] = start + static_cast<int32_t>(i);
  return t;
}

// A dim in [0, max_dim], with 0 and 1 drawn often: they are the edge cases.
inline int64_t random_dim(std::mt19937& g, int64_t max_dim) {
  int p = std::uniform_int_distribution<int>(0, 9)(g);
  if (p == 0) return 0;
  if (p <= 2) return 1;
  return std::uniform_int_distribution<int64_t>(2, max_dim)(g);
}

inline Shape random_shape(std::mt19937& g, int rank, int64_t max_dim) {
  Shape s(rank);
  for (auto& d : s) d = random_dim(g, max_dim);
  return s;
}

inline bool close(double got, double want, double atol, double rtol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

// got (float32) == want elementwise within atol + rtol * |want|; shape checked first.
inline void expect_close(const Tensor& got, const Shape& shape, const std::vector<double>& want, double atol,
                         double rtol, const std::string& what) {
  ASSERT_EQ(got.dtype(), DType::float32) << what;
  ASSERT_EQ(got.shape(), shape) << what;
  ASSERT_EQ(static_cast<size_t>(got.size()), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_TRUE(close(got.data<float>()[i], want[i], atol, rtol))
        << what << " at " << i << ": got " << got.data<float>()[i] << ", want " << want[i];
}

// The message of the ValueError that f throws ("" and a test failure when it throws nothing).
inline std::string value_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ValueError";
  return "";
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace kerascpp::test
