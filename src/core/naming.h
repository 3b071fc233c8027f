// Automatic names for layers made without one ("dense", "dense_1", ...), as Keras gives them, and
// Keras's snake_case of a class name, which makes those names and the paths of Keras 3 weight files.
// The counters are kerascpp's only process-wide state that models depend on; clear_session() resets
// them and touches nothing else. (The others are settings: the warning sink, core/warnings.cpp, and the
// diagnostics of KERASCPP_VERBOSE, kernels/dispatch_log.cpp.)
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kerascpp {

std::string unique_name(std::string_view prefix);
void reset_automatic_names();

// Keras 3's naming.to_snake_case: "PReLU" -> "p_re_lu", "Conv2DTranspose" -> "conv2d_transpose",
// "LSTM" -> "lstm", "MultiHeadAttention" -> "multi_head_attention".
std::string to_snake_case(std::string_view class_name);

// "learning_rate beta_1" -> {"learning_rate", "beta_1"}: how the families' .inc lists write word lists.
std::vector<std::string> split_words(std::string_view words);

}  // namespace kerascpp
