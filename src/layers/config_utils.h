// Reading values from a layer's canonical config with errors that name the layer and the key.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include "kerascpp/layer.h"

namespace kerascpp::layers {

// config[key] as T, or `fallback` when the key is missing or null. ValueError when of another type.
template <typename T>
T get(const Json& config, const char* key, T fallback) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  auto invalid = [&] {
    KCPP_THROW(ValueError, "Invalid value for `", key, "` in the config of layer '",
               config.value("name", std::string("?")), "'. Received: ", key, "=", it->dump());
  };
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // A float read as an integer must be one, and in range: converting 1e113 is undefined (found by
    // fuzzing).
    if (it->is_number_float()) {
      const double v = it->template get<double>();
      if (!(v == std::floor(v) && v >= static_cast<double>(std::numeric_limits<T>::min()) &&
            v <= static_cast<double>(std::numeric_limits<T>::max()) / 2))
        invalid();
      return static_cast<T>(v);
    }
  }
  try {
    return it->template get<T>();
  } catch (const Json::exception&) {
    invalid();
  }
  return fallback;  // not reached
}
// Required key.
template <typename T>
T require(const Json& config, const char* key) {
  KCPP_CHECK(config.contains(key) && !config[key].is_null(), ValueError, "Missing `", key,
             "` in the config of layer '", config.value("name", std::string("?")), "'");
  return get<T>(config, key, T{});
}
// An int or a list of ints (Keras accepts both for `axis`, `axes`, `shared_axes`).
std::vector<int> int_list(const Json& config, const char* key, std::vector<int> fallback);
// A shape list where null means unknown (-1).
Shape shape_from_json(const Json& j, const std::string& what);
// A Keras object given as a name ("glorot_uniform") or {"class_name": ..., "config": {...}}: its class
// name ("" for anything else) and config ({} when it has none).
std::pair<std::string, Json> keras_object(const Json& j);
Json shape_to_json(const Shape& s);

}  // namespace kerascpp::layers
