#include "layers/pooling/base_global_pooling.h"

#include "layers/config_utils.h"
#include "layers/plan_parts.h"
#include "layers/spatial_config.h"
#include "ops/ops.h"

namespace kerascpp::layers {

BaseGlobalPooling::BaseGlobalPooling(Json given, std::string cls, int dims, bool max)
    : Layer(std::move(given)),
      cls_(std::move(cls)),
      dims_(dims),
      max_(max),
      channels_first_(channels_first_from(config(), layer_who(name(), cls_))),
      keepdims_(get<bool>(config(), "keepdims", false)) {}

std::vector<int> BaseGlobalPooling::spatial_axes() const {
  std::vector<int> axes;
  for (int i = 0; i < dims_; ++i) axes.push_back(channels_first_ ? 2 + i : 1 + i);
  return axes;
}

std::vector<Shape> BaseGlobalPooling::compute_output_shape(const std::vector<Shape>& in) const {
  expect_inputs(in, 1);
  KCPP_CHECK(static_cast<int>(in[0].size()) == dims_ + 2, ValueError, "Input 0 of ", layer_who(name(), cls_),
             " is incompatible with the layer: expected ndim=", dims_ + 2, ", found ndim=", in[0].size(),
             ". Full shape received: ", shape_str(in[0]));
  const int64_t batch = in[0][0], channels = channels_first_ ? in[0][1] : in[0].back();
  if (!keepdims_) return {{batch, channels}};
  Shape out(dims_ + 2, 1);
  out[0] = batch;
  out[channels_first_ ? 1 : dims_ + 1] = channels;
  return {out};
}

std::vector<Tensor> BaseGlobalPooling::call(const std::vector<Tensor>& in, const CallContext& ctx) const {
  compute_output_shape({in[0].shape()});
  const Tensor mask = ctx.mask(0);
  if (mask.defined()) {  // GlobalAveragePooling1D: sum(x * mask) / sum(mask) over the steps, as Keras
    const Tensor& x = in[0];
    const int steps = channels_first_ ? 2 : 1;
    KCPP_CHECK(mask.shape() == Shape({x.dim(0), x.dim(steps)}), ValueError, layer_who(name(), cls_),
               " received a mask of shape ", shape_str(mask.shape()), " for an input of shape ", shape_str(x.shape()),
               "; expected (batch, steps) = (", x.dim(0), ", ", x.dim(steps), ")");
    const Tensor m = mask.reshape(channels_first_ ? Shape{x.dim(0), 1, x.dim(2)} : Shape{x.dim(0), x.dim(1), 1});
    const Tensor total = ops::sum(ops::binary(ops::BinaryOp::multiply, x, m), steps, keepdims_);
    return {ops::binary(ops::BinaryOp::divide, total, ops::sum(m, steps, keepdims_))};
  }
  return {max_ ? ops::reduce_max(in[0], spatial_axes(), keepdims_)
               : ops::reduce_mean(in[0], spatial_axes(), keepdims_)};
}

bool global_pool_parts(const Layer& layer, GlobalPoolParts* parts) {
  const auto* pool = dynamic_cast<const BaseGlobalPooling*>(&layer);
  if (pool) *parts = {pool->max(), pool->channels_first()};
  return pool != nullptr;
}

}  // namespace kerascpp::layers
