// Reading tests/fixtures/training/losses_metrics.json (written by
// scripts/fixtures/losses_metrics_reference.py with real Keras 3) for the loss and metric tests.
#pragma once

#include <cmath>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kerascpp/tensor.h"
#include "../test_paths.h"

namespace kerascpp::testing {

inline const nlohmann::json& losses_metrics_fixture() {
  static const nlohmann::json j = [] {
    std::ifstream f(fixture("training/losses_metrics.json"));
    EXPECT_TRUE(f.good()) << "missing fixture; run scripts/fixtures/losses_metrics_reference.py";
    return nlohmann::json::parse(f);
  }();
  return j;
}

// {"shape": [...], "dtype": "float32" | "int32", "data": [...]} -> Tensor; null -> undefined.
inline Tensor tensor_from_json(const nlohmann::json& j) {
  if (j.is_null()) return Tensor();
  const Shape shape = j["shape"].get<Shape>();
  if (j["dtype"] == "int32") {
    Tensor t = Tensor::empty(shape, DType::int32);
    for (int64_t i = 0; i < t.size(); ++i) t.data<int32_t>()[i] = j["data"][i].get<int32_t>();
    return t;
  }
  return Tensor::from_vector(shape, j["data"].get<std::vector<float>>());
}

// The message of the E that f throws, or "<no error>".
template <typename E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no error>";
}

inline bool close(double got, double want, double rel = 1e-5) {
  return std::fabs(got - want) <= rel * std::fabs(want) + 1e-6;
}

}  // namespace kerascpp::testing
