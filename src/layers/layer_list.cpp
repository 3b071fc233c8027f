#include "layers/layer_list.h"

#include <algorithm>
#include <map>

#include "core/naming.h"

namespace kerascpp {
namespace {

using Factory = LayerPtr (*)(Json);

const std::map<std::string, Factory, std::less<>>& factories() {
  static const std::map<std::string, Factory, std::less<>> table = {
#define KCPP_LAYER(name, factory) {#name, &layers::factory},
#include "kerascpp/layer_list.inc"
#undef KCPP_LAYER
  };
  return table;
}

}  // namespace

LayerPtr make_layer(const std::string& class_name, Json config) {
  const std::string name = config.value("name", std::string("?"));
  if (class_name == "TFOpLambda" || class_name == "SlicingOpLambda") return layers::make_tf_op_lambda(class_name, config);
  if (class_name.find('.') != std::string::npos) return layers::make_op_node(class_name, config);
  if (class_name == "Lambda") {
    const std::string function = layers::lambda_function_name(config);
    KCPP_THROW(NotImplementedError, "Layer '", name, "' is a Lambda layer, whose function ",
               function.empty() ? std::string("is Python bytecode stored in the model file") : "'" + function + "' is Python code",
               ". kerascpp never runs code from a model file; give the function under the name ",
               function.empty() ? "" : "'" + function + "' or ", "'", name,
               "' in custom_objects (C++: kerascpp::layers::lambda), or in Python load the model with "
               "safe_mode=False to run the stored function as Keras does.");
  }
  // Keras layers kerascpp knows of and does not run, with why.
  static const std::map<std::string, const char*, std::less<>> kRefused = {
      {"StringLookup", "it maps strings, and kerascpp's tensors hold numbers only"},
      {"TextVectorization", "it maps strings, and kerascpp's tensors hold numbers only"},
      {"HashedCrossing", "it crosses feature values as strings (FarmHash of their joined text), which kerascpp does not implement"}};
  if (auto r = kRefused.find(class_name); r != kRefused.end())
    KCPP_THROW(NotImplementedError, "Layer '", name, "' is a ", class_name, " layer, which kerascpp does not support: ",
               r->second);
  auto it = factories().find(class_name);
  if (it == factories().end()) {
    std::string known;
    for (const auto& [k, v] : factories()) known += (known.empty() ? "" : ", ") + k;
    KCPP_THROW(ValueError, "Unknown layer: '", class_name, "' (layer '", name,
               "'). Please ensure you are using a layer that kerascpp supports, or pass custom objects. "
               "Supported layers: ", known);
  }
  // Keras names unnamed layers after their class: dense, dense_1, p_re_lu, ...
  if (!config.contains("name")) config["name"] = unique_name(to_snake_case(class_name));
  return it->second(std::move(config));
}

std::vector<std::string> known_layer_classes() {
  std::vector<std::string> out;
  for (const auto& [k, v] : factories()) out.push_back(k);
  return out;
}

}  // namespace kerascpp
