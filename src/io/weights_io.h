// Reading Keras weights into a built model, straight into each variable's storage.
//   legacy layout (.h5 full model's model_weights group, Keras 2 weights-only .h5): keras-format.md §1.3
//   Keras 3 layout (.keras model.weights.h5, .weights.h5): keras-format.md §2.2
#pragma once

#include <functional>
#include <string>

#include "io/hdf5/hdf5_file.h"
#include "kerascpp/model.h"

namespace kerascpp::io {

// share_views (LoadOptions::mmap_weights, for a model just built): each variable whose dataset can be a
// view of the mapped file (H5Dataset::view) becomes that view instead of a copy, and the model's
// inference plans are rebuilt.
// group: the group holding layer_names (the file root of a weights-only .h5, or model_weights).
void load_legacy_weights(Model& model, const H5Group& group, const LoadWeightsOptions& options = {},
                         bool share_views = false);
// root: the root of a Keras 3 weights tree (model.weights.h5 or a .weights.h5 file).
void load_keras3_weights(Model& model, const H5Group& root, bool share_views = false);
// Reads one dataset into a variable: same shape required; converts the dtype if it differs.
void read_variable(Variable& v, const H5Dataset& ds);

// The Keras 3 weight tree (keras/src/saving/saving_lib.py _walk_saveable), walked once for reading and
// writing: visit(layer, path) for the layer and then, depth first, for each of its saveable_children,
// at <path>/<attribute> or <path>/<attribute>/<snake_case(class)>[_N]. A layer's variables sit in
// <path>/vars ("vars" at the root). locate(parent, attribute) names the group of an attribute (the
// reader maps "layers" to a Keras 2.12-2.14 archive's "_layer_checkpoint_dependencies").
using TreeVisitor = std::function<void(const Layer& layer, const std::string& path)>;
using AttributeLocator = std::function<std::string(const std::string& parent, const std::string& attribute)>;
void walk_keras3_tree(const Layer& root, const TreeVisitor& visit, const AttributeLocator& locate = {});
// "a/b" + "vars" -> "a/b/vars"; "" + "vars" -> "vars".
std::string tree_path(const std::string& parent, const std::string& child);

}  // namespace kerascpp::io
