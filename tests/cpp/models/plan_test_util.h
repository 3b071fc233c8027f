// What the inference-plan tests share (inference_plan_test.cpp, inference_plan_conv_test.cpp): the
// graph of a model, deterministic inputs, and the comparison of a plan's output with the
// interpreter's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kerascpp/kerascpp.h"
#include "models/functional.h"

namespace kerascpp::testing {

inline const models::Functional& graph_of(const Model& m) {
  return dynamic_cast<const models::Functional&>(m.graph());
}

// Values in [-2, 2), different per seed.
inline Tensor ramp(Shape shape, int seed = 0) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>((i * 37 + seed) % 101 - 50) / 25.f;
  return t;
}

// One ramp per input of m, with `batch` rows.
inline std::vector<Tensor> inputs_for(const Model& m, int64_t batch) {
  std::vector<Tensor> in;
  for (size_t i = 0; i < m.input_shapes().size(); ++i) {
    Shape s = m.input_shapes()[i];
    s[0] = batch;
    in.push_back(ramp(s, static_cast<int>(i)));
  }
  return in;
}

inline bool identical(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// got against want: bit for bit when the plan is exact, else within 1e-5 of want's scale (a plan that
// folded a BatchNormalization or scale into weights rounds kernel * scale once per weight, and
// post-ops add in the kernel's order). A NaN on either side fails.
inline void expect_matches(const Tensor& got, const Tensor& want, bool exact, size_t output = 0) {
  ASSERT_EQ(got.shape(), want.shape()) << "output " << output;
  if (exact) {
    EXPECT_TRUE(identical(got, want)) << "output " << output;
    return;
  }
  float scale = 1e-3f;
  for (int64_t i = 0; i < want.size(); ++i) scale = std::max(scale, std::fabs(want.data<float>()[i]));
  int64_t bad = 0;
  for (int64_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got.data<float>()[i] - want.data<float>()[i]) <= 1e-5f * scale)) ++bad;
  EXPECT_EQ(bad, 0) << "output " << output << ": values further than 1e-5 of scale " << scale
                    << " from the interpreter's, e.g. " << got.data<float>()[0] << " against " << want.data<float>()[0];
}

}  // namespace kerascpp::testing
