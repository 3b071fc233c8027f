// What the inference plan (models/inference_plan.h) reads of the layers it runs as its own kernels.
// Each recogniser is defined beside its layer's class and answers for that class only: a layer a
// caller supplies under the same Keras class name (custom_objects) is not recognised, and runs
// through its own call().
#pragma once

#include "kerascpp/layer.h"
#include "kernels/kinds.h"
#include "ops/ops.h"

namespace kerascpp::layers {

class ActivationFn;

// A Dense layer's weights and activation (bias null without use_bias); false for any other layer.
struct DenseParts {
  VariablePtr kernel, bias;
  const ActivationFn* activation = nullptr;
};
bool dense_parts(const Layer& layer, DenseParts* parts);
// The activation of an Activation layer, or null for any other layer.
const ActivationFn* activation_layer_fn(const Layer& layer);
// Layers whose inference output is their input reinterpreted (same floats, same order): Identity,
// Reshape, and Flatten for a channels_last input (or one of rank 2). The layers that act in training
// only derive from InferenceIdentity (regularization/inference_identity.h).
bool is_identity_layer(const Layer& layer);
bool is_reshape_layer(const Layer& layer);
bool flatten_is_view(const Layer& layer, const Shape& input);
// An elementwise merge (Add, Subtract, Multiply, Maximum, Minimum, Average): the op that folds its
// inputs pairwise, and whether it then divides by their count (Average); false for any other layer.
struct MergeParts {
  kernels::Binary op;
  bool average = false;
};
bool merge_parts(const Layer& layer, MergeParts* parts);
// Concatenate's axis as configured (may be negative); false for any other layer.
bool concatenate_axis(const Layer& layer, int* axis);
// ReLU's max_value, negative_slope and threshold; false for any other layer.
struct ReluParts {
  float max_value, negative_slope, threshold;
};
bool relu_parts(const Layer& layer, ReluParts* parts);
// BatchNormalization over one axis as inference runs it (the moving statistics; gamma / beta null
// without scale / center); false for any other layer, or one normalising over several axes.
struct BatchNormParts {
  VariablePtr gamma, beta, mean, variance;
  float epsilon = 0;
  int axis = -1;  // normalised
};
bool batch_norm_parts(const Layer& layer, BatchNormParts* parts);
// LayerNormalization: its variables (null without scale / center), normalised axes (sorted), epsilon
// and rms_scaling; false for any other layer.
struct LayerNormParts {
  VariablePtr gamma, beta;
  std::vector<int> axes;
  float epsilon = 0;
  bool rms_scaling = false;
};
bool layer_norm_parts(const Layer& layer, LayerNormParts* parts);

// A convolution (Conv1D-3D, DepthwiseConv1D/2D) as its call() runs ops::conv on an input of shape x:
// the kernel's shape as ops::conv reads it (a depthwise kernel in its grouped form), the options with
// the groups resolved, and the activation applied after it; false for any other layer.
struct ConvParts {
  VariablePtr kernel, bias;
  Shape kernel_shape;
  ops::ConvOptions options;
  const ActivationFn* activation = nullptr;
};
bool conv_parts(const Layer& layer, const Shape& x, ConvParts* parts);
// Max- and AveragePooling1D-3D: ops::pool's arguments; false for any other layer.
struct PoolParts {
  ops::PoolMode mode = ops::PoolMode::max;
  std::vector<int64_t> pool_size, strides;
  ops::Padding padding = ops::Padding::valid;
  bool channels_first = false;
};
bool pool_parts(const Layer& layer, PoolParts* parts);
// GlobalMax- and GlobalAveragePooling1D-3D without a mask: the max or mean over the spatial dims.
struct GlobalPoolParts {
  bool max = false;
  bool channels_first = false;
};
bool global_pool_parts(const Layer& layer, GlobalPoolParts* parts);
// keras.applications' CustomScaleLayer: [shortcut, residual] -> shortcut + residual * scale; false for
// any other layer.
bool custom_scale_parts(const Layer& layer, float* scale);
// ZeroPadding1D-3D: the zeros before and after each axis of an input of rank `rank` (the batch and
// channel axes {0, 0}), as its call() gives them to ops::pad; false for any other layer.
bool zero_padding_parts(const Layer& layer, int rank, std::vector<std::pair<int64_t, int64_t>>* pads);

}  // namespace kerascpp::layers
