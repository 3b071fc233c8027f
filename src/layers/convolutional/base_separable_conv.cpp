// SeparableConv1D / SeparableConv2D: a depthwise convolution (with the layer's strides, padding and
// dilation) followed by a 1x1 pointwise convolution, then bias and activation.
// x: (batch, *spatial, c); depthwise_kernel: (*kernel_size, c, depth_multiplier);
// pointwise_kernel: (1..., c * depth_multiplier, filters); bias: (filters,)
#include "layers/config_utils.h"
#include "layers/convolutional/base_conv.h"

namespace kerascpp::layers {
namespace {

class BaseSeparableConv : public Layer {
 public:
  BaseSeparableConv(Json given, const char* cls, int rank)
      : Layer(std::move(given)),
        cls_(cls),
        s_(config(), cls, rank, true),
        depth_multiplier_(get<int64_t>(config(), "depth_multiplier", 1)) {
    KCPP_CHECK(depth_multiplier_ > 0, ValueError, "Invalid value for argument `depth_multiplier` of ", s_.who,
               ". Expected a strictly positive value. Received depth_multiplier=", depth_multiplier_);
    KCPP_CHECK(s_.options.groups == 1, ValueError, s_.who, " takes no `groups`. Received: groups=", s_.options.groups);
    pointwise_.strides = pointwise_.dilation_rate = std::vector<int64_t>(rank, 1);
    pointwise_.channels_first = s_.options.channels_first;
  }
  std::string class_name() const override { return cls_; }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    const int64_t c = s_.channels(in[0]);
    if (depthwise_)
      KCPP_CHECK(c == depthwise_->shape()[s_.rank], ValueError, "Input 0 of ", s_.who, " is incompatible with the layer: "
                 "expected ", depthwise_->shape()[s_.rank], " channels. Received: input_shape=", shape_str(in[0]));
    return {s_.output_shape(in[0], s_.conv_output_spatial(in[0]), s_.filters)};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    const Tensor mid = s_.depthwise(in[0], depthwise_->value(), Tensor(), &depthwise_plans_,
                                    weights_version(depthwise_, nullptr));
    const Tensor bias = s_.use_bias ? bias_->value() : Tensor();
    return {s_.activation(ops::conv(mid, pointwise_kernel_->value(), bias, pointwise_, &pointwise_plans_,
                                    weights_version(pointwise_kernel_, bias_)))};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    compute_output_shape(in);
    const int64_t c = s_.channels(in[0]);
    Shape dk(s_.kernel_size.begin(), s_.kernel_size.end());
    dk.push_back(c);
    dk.push_back(depth_multiplier_);
    Shape pk(s_.rank, 1);
    pk.push_back(c * depth_multiplier_);
    pk.push_back(s_.filters);
    depthwise_ = add_weight("depthwise_kernel", dk);
    pointwise_kernel_ = add_weight("pointwise_kernel", pk);
    if (s_.use_bias) bias_ = add_weight("bias", {s_.filters});
  }

 private:
  std::string cls_;
  ConvSettings s_;
  int64_t depth_multiplier_;
  ops::ConvOptions pointwise_;
  VariablePtr depthwise_, pointwise_kernel_, bias_;
  mutable ops::PlanCache depthwise_plans_, pointwise_plans_;
};

}  // namespace

LayerPtr make_base_separable_conv(Json config, const char* cls, int rank) {
  return std::make_shared<BaseSeparableConv>(std::move(config), cls, rank);
}

}  // namespace kerascpp::layers
