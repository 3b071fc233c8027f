// The optimizer-weights layouts of Keras 2 era .h5 files that list every slot kind in its own block
// (one entry per trainable variable, in the model's trainable-weights order), where Keras 3 and
// tf_keras >= 2.11 list each variable's slots together:
//   - tf.keras 2.0-2.10 (OptimizerV2; tf_keras.optimizers.legacy today): "<Optimizer>/iter:0", then
//     "<Optimizer>/<variable>/<slot>:0" ("Adam/dense/kernel/m:0", ..., "Adam/dense/kernel/v:0", ...);
//   - Keras 2.0-2.3: [iterations] + the same blocks, unnamed ("Adam/iterations:0",
//     "training/Adam/Variable_3:0"); Keras 2.2.4 left out iterations for RMSprop, Adagrad and Adadelta
//     and kept Adam's unused vhats as (1,) zeros.
// The slot kinds per class (Keras 2 name -> kerascpp's slot): SGD momentum; Adam m, v, vhat;
// RMSprop rms, momentum, mg; Adagrad accumulator; Adadelta accum_grad, accum_var; Adamax m, v;
// Ftrl accumulator, linear (which OptimizerV2 lists variable by variable; the names tell them apart).
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "kerascpp/optimizers.h"
#include "kerascpp/tensor.h"

namespace kerascpp::io {

// Whether `names` (an optimizer_weights group's weight_names) are in one of the layouts above.
bool is_keras2_slot_major(const std::vector<std::string>& names);

// Each file value paired with the optimizer variable it restores, from the names and shapes; the
// optimizer is built for `trainable` (the model's trainable weights). Or why they cannot be paired
// (the class has no Keras 2 layout here, a count or shape that does not fit): a sentence naming it.
struct OptimizerAssignment {
  std::vector<std::pair<VariablePtr, Tensor>> values;
};
std::variant<OptimizerAssignment, std::string> pair_keras2_slot_major(const optimizers::Optimizer& optimizer,
                                                                      const std::vector<VariablePtr>& trainable,
                                                                      const std::vector<std::string>& names,
                                                                      const std::vector<Tensor>& values);

}  // namespace kerascpp::io
