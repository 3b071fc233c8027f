// The convolution family (keras/src/layers/convolutional/base_conv.py, base_depthwise_conv.py,
// base_separable_conv.py, base_conv_transpose.py): the config they share, read once, and the four
// base classes that Conv1D ... Conv3DTranspose instantiate with their rank.
//
//   LayerPtr make_conv2d(Json c) { return make_base_conv(std::move(c), "Conv2D", 2); }
#pragma once

#include <string>
#include <vector>

#include "kerascpp/layer.h"
#include "layers/activations/activation_fn.h"
#include "ops/ops.h"
#include "ops/plan_cache.h"

namespace kerascpp::layers {

// Keys every convolution reads. `filters` is 0 for the depthwise ones, which have none.
struct ConvSettings {
  ConvSettings(const Json& config, const std::string& cls, int rank, bool has_filters);
  std::string who;  // "layer 'name' (Conv2D)"
  int rank;
  int64_t filters = 0;
  std::vector<int64_t> kernel_size;
  ops::ConvOptions options;
  bool use_bias;
  ActivationFn activation;

  // x's channel count for this data_format; ValueError naming the layer unless x has rank + 2 dims
  // and a known channel count.
  int64_t channels(const Shape& x) const;
  // (batch, *spatial, channels) or channels_first, from per-dim sizes.
  Shape output_shape(const Shape& x, const std::vector<int64_t>& spatial, int64_t channels) const;
  std::vector<int64_t> spatial(const Shape& x) const;
  // x's spatial sizes after this convolution (unknown ones stay -1); ValueError naming the layer when
  // one would be <= 0.
  std::vector<int64_t> conv_output_spatial(const Shape& x) const;
  // The depthwise step: each channel of x convolved with its own `multiplier` filters. kernel:
  // (*kernel_size, c, multiplier), laid out exactly as the grouped kernel (*kernel_size, 1, c * m).
  Tensor depthwise(const Tensor& x, const Tensor& kernel, const Tensor& bias, ops::PlanCache* plans,
                   uint64_t version) const;
};

// One number that changes whenever kernel or bias (may be null) is assigned: the plan-cache version.
uint64_t weights_version(const VariablePtr& kernel, const VariablePtr& bias);

LayerPtr make_base_conv(Json config, const char* cls, int rank);
struct ConvParts;  // layers/plan_parts.h: conv_parts() asks these two
bool base_conv_parts(const Layer& layer, ConvParts* parts);
bool base_depthwise_conv_parts(const Layer& layer, const Shape& x, ConvParts* parts);
LayerPtr make_base_depthwise_conv(Json config, const char* cls, int rank);
LayerPtr make_base_separable_conv(Json config, const char* cls, int rank);
LayerPtr make_base_conv_transpose(Json config, const char* cls, int rank);

}  // namespace kerascpp::layers
