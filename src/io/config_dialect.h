// Normalises every Keras config dialect into the canonical one that layers and models parse
// (keras-format.md §3): the Keras 3 dialect, with dtype policies as plain strings, InputLayer
// shapes as batch_shape, inbound nodes as {"args", "kwargs"} with __keras_tensor__ references, and
// Keras 2's hard_sigmoid (0.2 x + 0.5) renamed hard_sigmoid_k2.
//
//   Json canon = io::canonical_model_config(Json::parse(text), io::config_keras_major(text_json));
#pragma once

#include <string>
#include <vector>

#include "kerascpp/layer.h"

namespace kerascpp::io {

// 2 or 3, from a keras_version string ("2.15.0", "3.15.1"); 0 when empty or unknown.
int keras_major(const std::string& keras_version);
// Guesses the writer's major version from the config itself (module keys are Keras 3 only).
int config_keras_major(const Json& model_config);
// model_config: {"class_name", "config"} of a model (any dialect), or a bare list of layers
// (Keras <= 2.2.2 Sequential). Returns {"class_name": "Functional"|"Sequential", "config": {...}}.
// keras_major selects Keras 2 semantics where names mean different things (0: guess).
Json canonical_model_config(Json model_config, int keras_major);
// Keras 3 counts a nested Functional model's own node first in a model's input_layers / output_layers
// (not in inbound nodes): its first call is node 1 there (keras/src/models/functional.py get_config).
// The canonical form says 0. delta: -1 reading a Keras 3 config, +1 writing one.
void shift_keras3_io_indices(Json& config, int delta);

// The layer entries ({"class_name", "config"}) a layer's config holds: a wrapper's "layer" and
// "backward_layer", an RNN's "cell", a StackedRNNCells' "cells" (pointers into config). Readers and
// writers apply their rules to these as to the model's layers.
std::vector<Json*> inner_layer_entries(Json& config);

// The layer classes whose numbers differ between tf_keras and Keras 3 when masks reach them (a fully
// masked softmax row, merged masks): read from a Keras 2 file they get "kerascpp_keras2" in their
// config (Layer::keras2_semantics).
bool keras2_semantics_differ(const std::string& class_name);

}  // namespace kerascpp::io
