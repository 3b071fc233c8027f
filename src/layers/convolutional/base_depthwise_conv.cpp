// DepthwiseConv1D / DepthwiseConv2D: each input channel convolved with its own depth_multiplier
// filters; computed as a grouped convolution with groups = channels.
// x: (batch, *spatial, c); kernel: (*kernel_size, c, depth_multiplier); bias: (c * depth_multiplier,)
#include "layers/config_utils.h"
#include "layers/convolutional/base_conv.h"
#include "layers/plan_parts.h"

namespace kerascpp::layers {
namespace {

class BaseDepthwiseConv : public Layer {
 public:
  BaseDepthwiseConv(Json given, const char* cls, int rank)
      : Layer(std::move(given)),
        cls_(cls),
        s_(config(), cls, rank, false),
        depth_multiplier_(get<int64_t>(config(), "depth_multiplier", 1)) {
    KCPP_CHECK(depth_multiplier_ > 0, ValueError, "Invalid value for argument `depth_multiplier` of ", s_.who,
               ". Expected a strictly positive value. Received depth_multiplier=", depth_multiplier_);
    KCPP_CHECK(s_.options.groups == 1, ValueError, s_.who, " takes no `groups`. Received: groups=", s_.options.groups);
  }
  std::string class_name() const override { return cls_; }
  // Keras names its "kernel"'s options depthwise_initializer, depthwise_regularizer, depthwise_constraint.
  std::string weight_config_key(const std::string& weight, const std::string& what) const override {
    return weight == "kernel" ? "depthwise_" + what : Layer::weight_config_key(weight, what);
  }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    const int64_t c = s_.channels(in[0]);
    if (kernel_)
      KCPP_CHECK(c == kernel_->shape()[s_.rank], ValueError, "Input 0 of ", s_.who, " is incompatible with the layer: "
                 "expected ", kernel_->shape()[s_.rank], " channels. Received: input_shape=", shape_str(in[0]));
    return {s_.output_shape(in[0], s_.conv_output_spatial(in[0]), c * depth_multiplier_)};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    const Tensor bias = s_.use_bias ? bias_->value() : Tensor();
    return {s_.activation(s_.depthwise(in[0], kernel_->value(), bias, &plans_, weights_version(kernel_, bias_)))};
  }
  // As ConvSettings::depthwise calls ops::conv: groups = channels, the kernel (*k, 1, c * multiplier).
  bool parts(const Shape& x, ConvParts* p) const {
    if (!kernel_ || static_cast<int>(x.size()) != s_.rank + 2) return false;
    const int64_t c = s_.options.channels_first ? x[1] : x.back();
    Shape grouped(s_.kernel_size.begin(), s_.kernel_size.end());
    grouped.push_back(1);
    grouped.push_back(kernel_->shape().back() * c);
    *p = {kernel_, bias_, grouped, s_.options, &s_.activation};
    p->options.groups = c;
    return true;
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

LayerPtr make_base_depthwise_conv(Json config, const char* cls, int rank) {
  return std::make_shared<BaseDepthwiseConv>(std::move(config), cls, rank);
}

bool base_depthwise_conv_parts(const Layer& layer, const Shape& x, ConvParts* parts) {
  const auto* conv = dynamic_cast<const BaseDepthwiseConv*>(&layer);
  return conv && conv->parts(x, parts);
}

bool conv_parts(const Layer& layer, const Shape& x, ConvParts* parts) {
  return base_conv_parts(layer, parts) || base_depthwise_conv_parts(layer, x, parts);
}

}  // namespace kerascpp::layers
