// Reading Keras weights into a built model, straight into each variable's storage.
//   legacy layout (.h5 full model's model_weights group, Keras 2 weights-only .h5): keras-format.md §1.3
//   Keras 3 layout (.keras model.weights.h5, .weights.h5): keras-format.md §2.2
#pragma once

#include <string>

#include "io/hdf5/hdf5_file.h"
#include "kerascpp/model.h"

namespace kerascpp::io {

// group: the group holding layer_names (the file root of a weights-only .h5, or model_weights).
void load_legacy_weights(Model& model, const H5Group& group);
// root: the root of a Keras 3 weights tree (model.weights.h5 or a .weights.h5 file).
void load_keras3_weights(Model& model, const H5Group& root);
// Reads one dataset into a variable: same shape required; converts the dtype if it differs.
void read_variable(Variable& v, const H5Dataset& ds);

}  // namespace kerascpp::io
