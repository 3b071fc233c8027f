// The fuzz harnesses' run of a model that loaded: one predict on zeros of its input shapes (None as 2),
// when every layer call's outputs stay under a million elements (the fuzzer's memory is bounded;
// LoadLimits allow larger real models).
#pragma once

#include "kerascpp/model.h"
#include "models/functional.h"

namespace kerascpp::fuzz {

inline int64_t elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d < 0 ? 2 : d, &n)) return INT64_MAX;
  return n;
}

inline void run_once(const Model& m) {
  const auto* graph = dynamic_cast<const models::Functional*>(&m.graph());
  if (!graph) return;
  for (const auto& call : graph->layer_calls())
    for (const Shape& s : call.output_shapes)
      if (elements(s) > (1 << 20)) return;
  std::vector<Tensor> inputs;
  for (const Shape& s : graph->input_shapes()) {
    Shape concrete = s;
    for (int64_t& d : concrete) d = d < 0 ? 2 : d;
    if (elements(concrete) > (1 << 20)) return;
    inputs.push_back(Tensor::zeros(concrete));
  }
  m.predict(inputs);
}

}  // namespace kerascpp::fuzz
