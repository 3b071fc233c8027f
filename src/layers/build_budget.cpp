#include "layers/build_budget.h"

#include "kerascpp/layer.h"

namespace kerascpp {

void BuildBudget::take_layers(uint64_t count, const std::string& model) {
  layers += count;
  KCPP_CHECK(layers <= max_layers, ValueError, "Model '", model, "' brings the layers to ", layers,
             " (nested models' counted), over the limit of ", max_layers, " (LoadLimits::max_layers)");
}

void BuildBudget::take_nodes(uint64_t count, const std::string& model) {
  nodes += count;
  KCPP_CHECK(nodes <= max_nodes, ValueError, "Model '", model, "' brings the layer calls to ", nodes,
             " (nested models' counted), over the limit of ", max_nodes, " (LoadLimits::max_nodes)");
}

void BuildBudget::take_weight(const Layer& layer, const std::string& weight, const Shape& shape, DType dtype) {
  uint64_t elements = dtype_size(dtype), bytes = 0;  // the weight's bytes, then the total: overflow-safe
  bool overflow = false;
  for (int64_t d : shape) overflow = overflow || __builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements);
  overflow = overflow || __builtin_add_overflow(weight_bytes, elements, &bytes);
  KCPP_CHECK(!overflow && bytes <= max_weight_bytes, ValueError, "Layer '", layer.name(), "' (", layer.class_name(),
             ") asks for weight '", weight, "' of shape ", shape_str(shape), ": ",
             overflow ? std::string("more bytes than can be counted") : std::to_string(elements) + " bytes",
             ", which with the model's weights before it (", weight_bytes, " bytes) is over the limit of ",
             max_weight_bytes, " bytes (", weight_limit, ")");
  weight_bytes = bytes;
}

void BuildBudget::check_output(const Layer& layer, const Shape& shape) const {
  KCPP_CHECK(shape.size() <= static_cast<size_t>(max_rank), ValueError, "Layer '", layer.name(), "' (",
             layer.class_name(), ") gives an output of rank ", shape.size(), ", over the limit of ", max_rank,
             " (LoadLimits::max_rank)");
  uint64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) overflow = overflow || (d > 0 && __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n));
  KCPP_CHECK(!overflow && n <= max_tensor_elements, ValueError, "Layer '", layer.name(), "' (", layer.class_name(),
             ") gives an output of shape ", shape_str(shape), ": ",
             overflow ? std::string("more elements than can be counted") : std::to_string(n) + " elements",
             ", over the limit of ", max_tensor_elements, " (LoadLimits::max_tensor_elements)");
}

}  // namespace kerascpp
