// Fast max and mean along the middle axis of x: (outer, axis, inner) -> y: (outer, inner), float32:
// the global poolings (GlobalMaxPooling*, GlobalAveragePooling*). Several neighbouring axes are
// reduced at once by merging them into `axis`. Same contracts as ref/spatial.h.
#pragma once

#include <cstdint>

namespace kerascpp::kernels {

// max of an empty axis is -inf.
void reduce_max(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner);
// Accumulated in double; the mean of an empty axis is NaN (0 / 0, as numpy).
void reduce_mean(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner);

}  // namespace kerascpp::kernels
