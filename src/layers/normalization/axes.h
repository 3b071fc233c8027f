// Axis handling shared by the normalisation layers: Keras's out-of-range message and the check that
// the dims a layer keeps weights for are known.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "layers/config_utils.h"

namespace kerascpp::layers {

// The axes normalised against `shape` (keras/src/layers/normalization/*.py compute_output_shape):
// ValueError "Layer 'ln' (LayerNormalization): Axis 3 is out of bounds for input shape (None, 4).
// Received: axis=3" naming the config's own `axis` value.
inline std::vector<int> checked_axes(const Layer& layer, const Json& config, const std::vector<int>& axes,
                                     const Shape& shape) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int> out;
  for (int a : axes) {
    KCPP_CHECK(a < rank && a >= -rank, ValueError, "Layer '", layer.name(), "' (", layer.class_name(), "): Axis ",
               a, " is out of bounds for input shape ", shape_str(shape),
               ". Received: axis=", config.value("axis", Json(-1)).dump());
    out.push_back(a < 0 ? a + rank : a);
  }
  return out;
}

// ValueError unless every axis in `axes` (normalised) has a known dim: the weights are sized by them.
inline void require_known_dims(const Layer& layer, const Json& config, const std::vector<int>& axes,
                               const Shape& shape) {
  for (int a : axes)
    KCPP_CHECK(shape[a] >= 0, ValueError, "Layer '", layer.name(), "' (", layer.class_name(),
               "): input has undefined `axis` dimension. Received: input_shape=", shape_str(shape),
               ", axis=", config.value("axis", Json(-1)).dump());
}

// True when the sorted, distinct axes form one block of adjacent dims.
inline bool adjacent(const std::vector<int>& sorted_axes) {
  return !sorted_axes.empty() && sorted_axes.back() - sorted_axes.front() + 1 == static_cast<int>(sorted_axes.size());
}

}  // namespace kerascpp::layers
