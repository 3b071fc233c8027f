// The kernel geometry of a convolution or pooling (kernels/conv.h) from Keras's shapes and options,
// with ops::conv's and ops::pool's checks and messages: what those ops run, for callers that run the
// kernels themselves (inference plans, which make one per batch size).
//
//   kernels::ConvGeometry g = ops::conv_geometry({-1, 28, 28, 1}, {3, 3, 1, 8}, options, rows);
#pragma once

#include "kernels/conv.h"
#include "ops/ops.h"

namespace kerascpp::ops {

// x: (batch, *spatial, in) or channels_first; the batch dim of x is replaced by `batch`.
kernels::ConvGeometry conv_geometry(const Shape& x, const Shape& kernel, const ConvOptions& o, int64_t batch);
kernels::PoolGeometry pool_geometry(const Shape& x, PoolMode mode, const std::vector<int64_t>& pool_size,
                                    const std::vector<int64_t>& strides, Padding padding, bool channels_first,
                                    int64_t batch);

}  // namespace kerascpp::ops
