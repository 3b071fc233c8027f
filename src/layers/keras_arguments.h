// Keras's arguments for layers built in code (kerascpp::layers::layer, the Python layer classes), from
// the table scripts/make_keras_arguments.py writes from real Keras 3 (keras_arguments.inc): a layer's
// config is Keras's defaults with the given arguments over them, in the forms Keras keeps them, so that
// get_config() equals Keras's for the same arguments.
#pragma once

#include <string>

#include "kerascpp/layers.h"

namespace kerascpp::layers {

// The table itself is public: kerascpp::layers::keras_arguments() (kerascpp/layers.h).

// keras.layers.<class_name>(**given) as the layer's config. ValueError "Unrecognized keyword arguments
// passed to <Class>: {...}" for an argument Keras's layer does not take, TypeError for a missing required
// one, ValueError for an initializer / regularizer / constraint Keras does not know. Classes outside
// the table (op nodes) get `given` as it is.
Json layer_arguments(const std::string& class_name, const Json& given);

// A Keras initializer / regularizer / constraint identifier (a name, or {"class_name", "config"}) as
// Keras saves it: {"module", "class_name", "config" (its defaults under the given), "registered_name"}.
// family: "initializers", "regularizers" or "constraints".
Json keras_object(const std::string& family, const Json& identifier);

}  // namespace kerascpp::layers
