// Writes a model's canonical config in the dialect a given Keras reads back (the inverse of
// config_dialect.h): Keras 3 (new envelopes with module / registered_name: config.json of a .keras
// archive, to_json(), and the model_config of a Keras 3 .h5), or Keras 2 as tf.keras / tf-keras
// read it (legacy envelopes, list inbound nodes, batch_input_shape, node indices counting a nested
// model's own node). What one dialect cannot express (Keras 3's hard_sigmoid in Keras 2, Keras 2's
// in Keras 3) is refused with NotImplementedError naming the layer.
//
//   Json c3 = io::keras3_model_config(model);   // {"module": "keras", "class_name": "Sequential", ...}
//   Json c2 = io::keras2_model_config(model);   // {"class_name": "Sequential", "config": {...}}
#pragma once

#include "kerascpp/model.h"

namespace kerascpp::io {

Json keras3_model_config(const Model& model);
Json keras2_model_config(const Model& model);
// The training config in the form each file keeps it: a .keras compile_config ({"optimizer": ...})
// or an .h5 training_config ({"optimizer_config": ...}); {} when the model has none.
Json keras3_compile_config(const Model& model);
Json legacy_training_config(const Model& model, KerasDialect dialect);

}  // namespace kerascpp::io
