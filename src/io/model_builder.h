// The one way a config becomes a model, for load_model, model_from_config and the config fuzz harness
// (fuzz/config_fuzzer.cpp): any Keras dialect canonicalised (io/config_dialect.h), then built as a
// Functional graph, drawing on `budget` when the config comes from a file (layers/build_budget.h).
//
//   BuildBudget budget = io::budget_of(options.limits, file_bytes, "model.h5");
//   Model m = io::build_model(Json::parse(text), /*major=*/0, Json::object(), custom, &budget);
#pragma once

#include "kerascpp/model.h"
#include "layers/build_budget.h"

namespace kerascpp::io {

// What the model a file describes may take: its weights are read from `weight_bytes` bytes of
// `weights` (named in errors), so they cannot be much more (LoadLimits::max_weight_bytes).
BuildBudget budget_of(const LoadLimits& limits, uint64_t weight_bytes, const std::string& weights);

// major: the Keras major version that wrote the config (2 or 3), 0 to tell from the config. A value
// of the wrong JSON type is a ValueError naming the layer when it is inside one.
Model build_model(Json raw_config, int major, Json training_config, const CustomObjects& custom,
                  BuildBudget* budget = nullptr);

}  // namespace kerascpp::io
