// Max- and AveragePooling 1D / 2D / 3D. Average pooling with padding="same" divides by the cells
// inside the input, as TensorFlow does.
// x: (batch, *spatial, c) or channels_first (batch, c, *spatial) -> same rank, pooled spatial dims
#include "layers/pooling/base_pooling.h"

#include "layers/config_utils.h"
#include "layers/plan_parts.h"
#include "layers/spatial_config.h"
#include "ops/plan_cache.h"

namespace kerascpp::layers {
namespace {

class BasePooling : public Layer {
 public:
  BasePooling(Json given, const char* cls, int rank, ops::PoolMode mode)
      : Layer(std::move(given)),
        cls_(cls),
        who_(layer_who(name(), cls)),
        rank_(rank),
        mode_(mode),
        pool_size_(int_tuple(config(), "pool_size", rank, std::vector<int64_t>(rank, 2), 1, who_)),
        strides_(int_tuple(config(), "strides", rank, pool_size_, 1, who_)),
        padding_(ops::padding_from_name(get<std::string>(config(), "padding", "valid"), who_)),
        channels_first_(channels_first_from(config(), who_)) {
    KCPP_CHECK(padding_ != ops::Padding::causal, ValueError, "The `padding` argument of ", who_,
               " must be \"valid\" or \"same\". Received: padding=causal");
  }
  std::string class_name() const override { return cls_; }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    KCPP_CHECK(static_cast<int>(in[0].size()) == rank_ + 2, ValueError, "Input 0 of ", who_, " is incompatible with the "
               "layer: expected ndim=", rank_ + 2, ", found ndim=", in[0].size(), ". Full shape received: ", shape_str(in[0]));
    Shape out = in[0];
    const int first = channels_first_ ? 2 : 1;
    for (int i = 0; i < rank_; ++i) {
      int64_t& d = out[first + i];
      if (d < 0) continue;
      d = ops::conv_output_length(d, pool_size_[i], strides_[i], 1, padding_);
      KCPP_CHECK(d > 0, ValueError, "Computed output size would be negative or zero for ", who_,
                 ". Received: input_shape=", shape_str(in[0]), ", pool_size=", pool_size_[i]);
    }
    return {out};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::pool(in[0], mode_, pool_size_, strides_, padding_, channels_first_, &plans_)};
  }
  PoolParts parts() const { return {mode_, pool_size_, strides_, padding_, channels_first_}; }

 private:
  std::string cls_, who_;
  int rank_;
  ops::PoolMode mode_;
  std::vector<int64_t> pool_size_, strides_;
  ops::Padding padding_;
  bool channels_first_;
  mutable ops::PlanCache plans_;
};

}  // namespace

LayerPtr make_base_pooling(Json config, const char* cls, int rank, ops::PoolMode mode) {
  return std::make_shared<BasePooling>(std::move(config), cls, rank, mode);
}

bool pool_parts(const Layer& layer, PoolParts* parts) {
  const auto* pool = dynamic_cast<const BasePooling*>(&layer);
  if (pool) *parts = pool->parts();
  return pool != nullptr;
}

}  // namespace kerascpp::layers
