// Max- and AveragePooling 1D / 2D / 3D (keras/src/layers/pooling/base_pooling.py): one class that
// the six Keras classes instantiate with their rank and mode.
#pragma once

#include "kerascpp/layer.h"
#include "ops/ops.h"

namespace kerascpp::layers {

LayerPtr make_base_pooling(Json config, const char* cls, int rank, ops::PoolMode mode);

}  // namespace kerascpp::layers
