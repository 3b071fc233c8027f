// What differs between a layer's config in Keras 2 (tf_keras) and in Keras 3, as one table per class
// (dialect_rules.cpp), read both ways: config_dialect.cpp turns a Keras 2 config into the canonical
// (Keras 3) one, config_writer.cpp turns the canonical one back into Keras 2.
//
//   keras2_layer_keys_to_canonical("LeakyReLU", c, 2);   // {"alpha": 0.1} -> {"negative_slope": 0.1}
//   canonical_layer_keys_to_keras2("LeakyReLU", c);      // and back
#pragma once

#include <string>

#include "kerascpp/layer.h"

namespace kerascpp::io {

// Reading: renamed keys take their Keras 3 name (any file: Keras 3 loads Keras 2 names too); from a
// Keras 2 file (major 2), the keys Keras 3 refuses are dropped when they hold what Keras 3 does anyway
// (NotImplementedError naming the layer otherwise), and Keras 2 activation names take theirs.
void keras2_layer_keys_to_canonical(const std::string& class_name, Json& config, int major);
// Writing Keras 2: renamed keys take their Keras 2 name; keys Keras 2 lacks are dropped when they hold
// what Keras 2 does anyway, and are a NotImplementedError naming the layer when they do not.
void canonical_layer_keys_to_keras2(const std::string& class_name, Json& config);
// Writing Keras 3: NotImplementedError for what only Keras 2 can express (hard_sigmoid_k2).
void check_keras3_expressible(const std::string& class_name, const Json& config);

// Keras 3 layer classes that tf_keras does not have (its image augmentation beyond the first seven).
bool keras3_only_layer(const std::string& cls);

}  // namespace kerascpp::io
