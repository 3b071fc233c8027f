// Conv1D / Conv2D / Conv3D: y = activation(conv(x, kernel) + bias), and the settings the whole
// convolution family shares.
// x: (batch, *spatial, in) or channels_first (batch, in, *spatial); kernel: (*kernel_size, in / groups,
// filters); bias: (filters,)
#include "layers/convolutional/base_conv.h"

#include "layers/config_utils.h"
#include "layers/plan_parts.h"
#include "layers/spatial_config.h"

namespace kerascpp::layers {

ConvSettings::ConvSettings(const Json& config, const std::string& cls, int rank_, bool has_filters)
    : who(layer_who(config.value("name", std::string("?")), cls)),
      rank(rank_),
      use_bias(get<bool>(config, "use_bias", true)),
      activation(config.value("activation", Json("linear")), config.value("name", std::string("?"))) {
  if (has_filters) {
    filters = require<int64_t>(config, "filters");
    KCPP_CHECK(filters > 0, ValueError, "Invalid value for argument `filters` of ", who,
               ". Expected a strictly positive value. Received filters=", filters);
  }
  kernel_size = int_tuple(config, "kernel_size", rank, {}, 1, who);
  KCPP_CHECK(!kernel_size.empty(), ValueError, "Missing `kernel_size` in the config of ", who);
  options.strides = int_tuple(config, "strides", rank, std::vector<int64_t>(rank, 1), 1, who);
  options.dilation_rate = int_tuple(config, "dilation_rate", rank, std::vector<int64_t>(rank, 1), 1, who);
  options.padding = ops::padding_from_name(get<std::string>(config, "padding", "valid"), who);
  KCPP_CHECK(options.padding != ops::Padding::causal || cls == "Conv1D", ValueError,
             "The `padding` argument of ", who, " must be \"valid\" or \"same\"; only Conv1D accepts \"causal\". "
             "Received: padding=causal");
  options.channels_first = channels_first_from(config, who);
  options.groups = get<int64_t>(config, "groups", 1);
  KCPP_CHECK(options.groups >= 1 && (filters == 0 || filters % options.groups == 0), ValueError,
             "The number of filters must be evenly divisible by the number of groups in ", who,
             ". Received: groups=", options.groups, ", filters=", filters);
  // Keras 3's LoRA fine-tuning adds variables kerascpp does not read.
  KCPP_CHECK(get<Json>(config, "lora_rank", Json()).is_null(), NotImplementedError,
             who, ": LoRA (`lora_rank`) is not supported");
}

int64_t ConvSettings::channels(const Shape& x) const {
  KCPP_CHECK(static_cast<int>(x.size()) == rank + 2, ValueError, "Input 0 of ", who, " is incompatible with the layer: "
             "expected ndim=", rank + 2, ", found ndim=", x.size(), ". Full shape received: ", shape_str(x));
  const int64_t c = options.channels_first ? x[1] : x.back();
  KCPP_CHECK(c > 0, ValueError, "The channel dimension of the inputs of ", who,
             " should be defined. Received: input_shape=", shape_str(x));
  return c;
}

std::vector<int64_t> ConvSettings::spatial(const Shape& x) const {
  const size_t first = options.channels_first ? 2 : 1;
  return std::vector<int64_t>(x.begin() + first, x.begin() + first + rank);
}

Shape ConvSettings::output_shape(const Shape& x, const std::vector<int64_t>& sp, int64_t c) const {
  Shape s = {x[0]};
  if (options.channels_first) s.push_back(c);
  s.insert(s.end(), sp.begin(), sp.end());
  if (!options.channels_first) s.push_back(c);
  return s;
}

uint64_t weights_version(const VariablePtr& kernel, const VariablePtr& bias) {
  return (kernel->version() << 32) ^ (bias ? bias->version() : 0);
}

std::vector<int64_t> ConvSettings::conv_output_spatial(const Shape& x) const {
  std::vector<int64_t> sp = spatial(x);
  for (int i = 0; i < rank; ++i) {
    if (sp[i] < 0) continue;
    sp[i] = ops::conv_output_length(sp[i], kernel_size[i], options.strides[i], options.dilation_rate[i], options.padding);
    KCPP_CHECK(sp[i] > 0, ValueError, "Computed output size would be negative for ", who, ". Received: input_shape=",
               shape_str(x), ", kernel_size=", kernel_size[i]);
  }
  return sp;
}

Tensor ConvSettings::depthwise(const Tensor& x, const Tensor& kernel, const Tensor& bias, ops::PlanCache* plans,
                               uint64_t version) const {
  const int64_t c = channels(x.shape());
  ops::ConvOptions o = options;
  o.groups = c;
  Shape grouped(kernel_size.begin(), kernel_size.end());
  grouped.push_back(1);
  grouped.push_back(kernel.shape().back() * c);
  return ops::conv(x, kernel.reshape(grouped), bias, o, plans, version);
}

namespace {

class BaseConv : public Layer {
 public:
  BaseConv(Json given, const char* cls, int rank)
      : Layer(std::move(given)), cls_(cls), s_(config(), cls, rank, true) {}
  std::string class_name() const override { return cls_; }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    const int64_t c = s_.channels(in[0]);
    KCPP_CHECK(c % s_.options.groups == 0, ValueError, "The number of input channels must be evenly divisible by the "
               "number of groups in ", s_.who, ". Received groups=", s_.options.groups, ", but the input has ", c, " channels");
    if (kernel_)
      KCPP_CHECK(c == kernel_->shape()[s_.rank] * s_.options.groups, ValueError, "Input 0 of ", s_.who,
                 " is incompatible with the layer: expected ", kernel_->shape()[s_.rank] * s_.options.groups,
                 " channels. Received: input_shape=", shape_str(in[0]));
    return {s_.output_shape(in[0], s_.conv_output_spatial(in[0]), s_.filters)};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    const Tensor bias = s_.use_bias ? bias_->value() : Tensor();
    return {s_.activation(ops::conv(in[0], kernel_->value(), bias, s_.options, &plans_, weights_version(kernel_, bias_)))};
  }
  bool parts(ConvParts* p) const {
    if (!kernel_) return false;
    *p = {kernel_, bias_, kernel_->shape(), s_.options, &s_.activation};
    return true;
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    compute_output_shape(in);
    Shape k(s_.kernel_size.begin(), s_.kernel_size.end());
    k.push_back(s_.channels(in[0]) / s_.options.groups);
    k.push_back(s_.filters);
    kernel_ = add_weight("kernel", k);
    if (s_.use_bias) bias_ = add_weight("bias", {s_.filters});
  }

 private:
  std::string cls_;
  ConvSettings s_;
  VariablePtr kernel_, bias_;
  mutable ops::PlanCache plans_;
};

}  // namespace

LayerPtr make_base_conv(Json config, const char* cls, int rank) {
  return std::make_shared<BaseConv>(std::move(config), cls, rank);
}

bool base_conv_parts(const Layer& layer, ConvParts* parts) {
  const auto* conv = dynamic_cast<const BaseConv*>(&layer);
  return conv && conv->parts(parts);
}

}  // namespace kerascpp::layers
