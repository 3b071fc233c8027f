// Keras's encoding of integer category indices (keras/src/utils/numerical_utils.py
// encode_categorical_inputs), shared by CategoryEncoding and Discretization: "int" keeps the indices,
// "one_hot" gives one row of num_tokens per index (a trailing axis of 1 replaced), "multi_hot" and
// "count" one row per sample over the last axis (presence, or occurrences). Indices outside
// [0, num_tokens) add nothing, as in Keras; results are float32.
#pragma once

#include <string>

#include "kerascpp/layer.h"

namespace kerascpp::layers {

// kerascpp's tensors are float32: integers (ids, bins, tokens) are exact up to 2^24.
constexpr int64_t kExactFloatIntegers = int64_t{1} << 24;

// TensorFlow's float -> int64 cast on x86-64 (cvttss2si): truncation toward zero, and INT64_MIN for NaN
// and for values beyond int64's range, where a plain static_cast is undefined.
inline int64_t tf_cast_int64(float v) {
  if (!(v > -9.2233720e18f && v < 9.2233720e18f)) return INT64_MIN;
  return static_cast<int64_t>(v);
}

enum class CategoryOutput { int_, one_hot, multi_hot, count };
CategoryOutput category_output(const std::string& mode, const std::string& who);  // ValueError for another
Shape encoded_shape(const Shape& in, int64_t num_tokens, CategoryOutput mode);
Tensor encode_categories(const Tensor& indices, int64_t num_tokens, CategoryOutput mode);

}  // namespace kerascpp::layers
