// Keras's encoding of integer category indices (keras/src/utils/numerical_utils.py
// encode_categorical_inputs), shared by CategoryEncoding and Discretization: "int" keeps the indices,
// "one_hot" gives one row of num_tokens per index (a trailing axis of 1 replaced), "multi_hot" and
// "count" one row per sample over the last axis (presence, or occurrences). Indices outside
// [0, num_tokens) add nothing, as in Keras; results are float32.
#pragma once

#include <string>

#include "kerascpp/layer.h"

namespace kerascpp::layers {

enum class CategoryOutput { int_, one_hot, multi_hot, count };
CategoryOutput category_output(const std::string& mode, const std::string& who);  // ValueError for another
Shape encoded_shape(const Shape& in, int64_t num_tokens, CategoryOutput mode);
Tensor encode_categories(const Tensor& indices, int64_t num_tokens, CategoryOutput mode);

}  // namespace kerascpp::layers
