// BuildBudget: what a model built from a file may take (LoadLimits, kerascpp/model.h), drawn on while
// it is built, so that a file asking for too much is refused, naming the layer and the value, before
// the memory is taken. load_model makes one per load; the Functional graphs of that load (nested
// models too) share it, and a layer's add_weight draws its variables' bytes from it.
//
//   BuildBudget budget;
//   budget.max_weight_bytes = 4 * file_bytes + (16 << 20);
//   budget.weight_limit = "four times the weights of model.h5 plus 16 MiB";
//   auto graph = std::make_shared<models::Functional>("Functional", config, &custom, nullptr, &budget);
#pragma once

#include <cstdint>
#include <string>

#include "kerascpp/tensor.h"

namespace kerascpp {

class Layer;

struct BuildBudget {
  uint64_t max_layers = UINT64_MAX;
  uint64_t max_nodes = UINT64_MAX;
  uint64_t max_weight_bytes = UINT64_MAX;
  std::string weight_limit = "LoadLimits::max_weight_bytes";  // how max_weight_bytes was set
  int max_rank = INT32_MAX;
  uint64_t max_tensor_elements = UINT64_MAX;

  uint64_t layers = 0, nodes = 0, weight_bytes = 0;  // taken so far

  // ValueError naming the model when its `count` more layers / nodes go over the limit.
  void take_layers(uint64_t count, const std::string& model);
  void take_nodes(uint64_t count, const std::string& model);
  // ValueError naming the layer, the weight and its bytes when they go over the limit.
  void take_weight(const Layer& layer, const std::string& weight, const Shape& shape, DType dtype);
  // ValueError naming the layer when an output's rank or elements (None counted as 1) go over the
  // limits.
  void check_output(const Layer& layer, const Shape& shape) const;
};

}  // namespace kerascpp
