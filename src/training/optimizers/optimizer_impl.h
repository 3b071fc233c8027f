// Internal to src/training/optimizers: config helpers shared by the optimizer classes, and the
// factories that optimizers::get() dispatches to (one per Keras class, each in its own file).
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "kerascpp/optimizers.h"

namespace kerascpp::optimizers::detail {

// The config an optimizer class is built from, cleaned the way Keras 3's constructors see it:
// Keras 2 aliases renamed (lr -> learning_rate), tf_keras's harmless keys dropped (jit_compile,
// is_legacy_optimizer, decay=0), options kerascpp does not implement rejected with
// NotImplementedError naming them, unknown keys rejected as Keras does ("Argument(s) not
// recognized"), and every missing key set to the class's default (`own` holds the class's keys
// and defaults, learning_rate included).
Json prepare_config(const Json& config, const std::string& class_name, const Json& own);

// config[key] as a number; ValueError naming the key otherwise.
double number(const Json& config, const std::string& key);
inline float f32(double v) { return static_cast<float>(v); }

// The class's own keys of its config, for own_config().
Json pick(const Json& config, std::initializer_list<const char*> keys);

OptimizerPtr make_sgd(const Json& config);
OptimizerPtr make_adam(const Json& config);
OptimizerPtr make_adamw(const Json& config);
OptimizerPtr make_rmsprop(const Json& config);
OptimizerPtr make_adagrad(const Json& config);
OptimizerPtr make_adadelta(const Json& config);
OptimizerPtr make_adamax(const Json& config);
OptimizerPtr make_nadam(const Json& config);
OptimizerPtr make_lion(const Json& config);
OptimizerPtr make_ftrl(const Json& config);
OptimizerPtr make_lamb(const Json& config);
OptimizerPtr make_adafactor(const Json& config);

}  // namespace kerascpp::optimizers::detail
