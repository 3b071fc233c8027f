// keras.initializers and keras.constraints as functions of a Keras config, for code that builds or
// trains weights itself (layers apply their own). A config is a name ("he_normal", "max_norm") or
// {"class_name": ..., "config": {...}}, as Keras saves them.
//
//   Tensor w = kerascpp::initializers::initial_value("glorot_uniform", {8, 4}, 42);
//   Tensor projected = kerascpp::constraints::apply({{"class_name", "MaxNorm"}, {"config", {{"max_value", 2}}}}, w);
#pragma once

#include <cstdint>
#include <optional>

#include "kerascpp/layer.h"

namespace kerascpp {
namespace initializers {
// The values the initializer gives a weight of `shape`. A seed in the config wins; else `seed`, else the
// random device. ValueError naming the initializer for an unknown one or a shape it cannot fill.
Tensor initial_value(const Json& initializer, const Shape& shape, std::optional<uint64_t> seed = std::nullopt);
}  // namespace initializers
namespace constraints {
// The weight projected by the constraint (a new tensor). ValueError for an unknown one.
Tensor apply(const Json& constraint, const Tensor& weight);
}  // namespace constraints
}  // namespace kerascpp
