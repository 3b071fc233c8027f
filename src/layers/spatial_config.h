// Config keys shared by the spatial layers (padding, cropping, upsampling, resizing, global pooling),
// parsed as Keras 3 and tf_keras write them, with errors that name the layer and the key.
//
//   bool cf = channels_first_from(config, who);                    // data_format
//   auto pads = pair_list(config, "padding", 2, {{1, 1}, {1, 1}}, who);
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kerascpp/layer.h"
#include "ops/ops.h"

namespace kerascpp::layers {

// "layer 'name' (Class)", the subject of the messages below.
std::string layer_who(const std::string& name, const std::string& cls);

// config["data_format"]: "channels_last" (also when missing or null: Keras's default
// image_data_format) or "channels_first"; ValueError otherwise.
bool channels_first_from(const Json& config, const std::string& who);

// Keras's standardize_tuple: an int (repeated n times) or a list of n ints, each >= min_value.
std::vector<int64_t> int_tuple(const Json& config, const char* key, int n, std::vector<int64_t> fallback,
                               int64_t min_value, const std::string& who);

// ZeroPadding / Cropping amounts as (before, after) per spatial dim, all >= 0: an int (everywhere),
// a list of n ints (symmetric per dim) or a list of n pairs. With n == 1 a pair [a, b] is
// (before, after), as ZeroPadding1D / Cropping1D read it.
std::vector<std::pair<int64_t, int64_t>> pair_list(const Json& config, const char* key, int n,
                                                   std::vector<std::pair<int64_t, int64_t>> fallback,
                                                   const std::string& who);

// config[key] as a resize method (case-insensitive, as UpSampling2D lowers it). "lanczos3",
// "lanczos5", "area", "gaussian" and "mitchellcubic" are Keras / TF methods that kerascpp does not
// compute: NotImplementedError; anything else: ValueError.
ops::ResizeMethod resize_method_from(const Json& config, const char* key, const std::string& fallback,
                                     const std::string& who);

}  // namespace kerascpp::layers
