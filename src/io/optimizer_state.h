// The compiled state a saved model carries: compiling a loaded model from its training config, and
// the optimizer's variables in the places Keras keeps them (see tests/fixtures/training/README.md
// and the comment at the top of src/training/optimizers/optimizer.cpp):
//   .keras / .weights.h5: optimizer/vars/{0..N-1} (attribute name = the optimizer's name), in
//     optimizer.variables order: iteration, learning_rate (unless a schedule), the slots;
//   legacy .h5: optimizer_weights, attribute weight_names = the datasets' paths in that order;
//     Keras 2 (tf-keras) has no learning_rate entry and names them "iteration:0", "Adam/m/<var>:0".
// Keras itself restores these by position, and so does kerascpp; the Keras 2 era files that list
// each slot kind in its own block (tf.keras 2.0-2.10, Keras 2.0-2.3) are paired by name and block
// (keras2_optimizer_layout.h).
#pragma once

#include "io/hdf5/hdf5_file.h"
#include "io/hdf5/hdf5_writer.h"
#include "kerascpp/model.h"

namespace kerascpp::io {

// Compiles `model` from the training config it was loaded with (Keras 3 compile_config or a legacy
// training_config). Losses and metrics kerascpp does not know come from options.custom_loss /
// custom_metric; a config kerascpp still cannot compile leaves the model uncompiled with a warning on
// stderr, as Keras warns, and never fails the load.
void compile_from_saved_config(Model& model, const std::string& file, const LoadOptions& options = {});

// Writers: nothing when the model is not compiled or its optimizer is not built yet.
void write_optimizer_keras3(const Model& model, const H5WriteGroup& root);
void write_optimizer_legacy(const Model& model, const H5WriteGroup& root, KerasDialect dialect);
// Readers: the optimizer is built for the model's trainable weights and its variables assigned in
// order. A count or shape that does not fit leaves the optimizer fresh, with a warning (Keras
// warns the same way), and never fails the load.
void read_optimizer_keras3(Model& model, const H5Group& root, const std::string& file);
void read_optimizer_legacy(Model& model, const H5Group& root, const std::string& file);

}  // namespace kerascpp::io
