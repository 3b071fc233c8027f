// DepthwiseConv1D / DepthwiseConv2D: each input channel convolved with its own depth_multiplier
// filters; computed as a grouped convolution with groups = channels.
// x: (batch, *spatial, c); kernel: (*kernel_size, c, depth_multiplier); bias: (c * depth_multiplier,)
#include "layers/config_utils.h"
#include "layers/convolutional/base_conv.h"

namespace kerascpp::layers {
namespace {

class BaseDepthwiseConv : public Layer {
 public:
  BaseDepthwiseConv(const Json& config, const char* cls, int rank)
      : Layer(config), cls_(cls), s_(config, cls, rank, false),
        depth_multiplier_(get<int64_t>(config, "depth_multiplier", 1)) {
    KCPP_CHECK(depth_multiplier_ > 0, ValueError, "Invalid value for argument `depth_multiplier` of ", s_.who,
               ". Expected a strictly positive value. Received depth_multiplier=", depth_multiplier_);
    KCPP_CHECK(s_.options.groups == 1, ValueError, s_.who, " takes no `groups`. Received: groups=", s_.options.groups);
  }
  std::string class_name() const override { return cls_; }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    const int64_t c = s_.channels(in[0]);
    if (kernel_)
      KCPP_CHECK(c == kernel_->shape()[s_.rank], ValueError, "Input 0 of ", s_.who, " is incompatible with the layer: "
                 "expected ", kernel_->shape()[s_.rank], " channels. Received: input_shape=", shape_str(in[0]));
    std::vector<int64_t> sp = s_.spatial(in[0]);
    for (int i = 0; i < s_.rank; ++i) {
      if (sp[i] < 0) continue;
      sp[i] = ops::conv_output_length(sp[i], s_.kernel_size[i], s_.options.strides[i], s_.options.dilation_rate[i],
                                      s_.options.padding);
      KCPP_CHECK(sp[i] > 0, ValueError, "Computed output size would be negative for ", s_.who,
                 ". Received: input_shape=", shape_str(in[0]));
    }
    return {s_.output_shape(in[0], sp, c * depth_multiplier_)};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    const int64_t c = s_.channels(in[0].shape());
    ops::ConvOptions o = s_.options;
    o.groups = c;
    // (*k, c, m) is laid out exactly as the grouped kernel (*k, 1, c * m).
    Shape grouped(s_.kernel_size.begin(), s_.kernel_size.end());
    grouped.push_back(1);
    grouped.push_back(c * depth_multiplier_);
    const Tensor bias = s_.use_bias ? bias_->value() : Tensor();
    return {s_.activation(ops::conv(in[0], kernel_->value().reshape(grouped), bias, o, &plans_,
                                    weights_version(kernel_, bias_)))};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    compute_output_shape(in);
    const int64_t c = s_.channels(in[0]);
    Shape k(s_.kernel_size.begin(), s_.kernel_size.end());
    k.push_back(c);
    k.push_back(depth_multiplier_);
    kernel_ = add_weight("kernel", k);
    if (s_.use_bias) bias_ = add_weight("bias", {c * depth_multiplier_});
  }

 private:
  std::string cls_;
  ConvSettings s_;
  int64_t depth_multiplier_;
  VariablePtr kernel_, bias_;
  mutable ops::PlanCache plans_;
};

}  // namespace

LayerPtr make_base_depthwise_conv(const Json& config, const char* cls, int rank) {
  return std::make_shared<BaseDepthwiseConv>(config, cls, rank);
}

}  // namespace kerascpp::layers
