// Conv1DTranspose / Conv2DTranspose / Conv3DTranspose: the adjoint of a convolution ("deconvolution"),
// output sizes as Keras computes them (keras/src/utils/conv_utils / operation_utils).
// x: (batch, *spatial, in); kernel: (*kernel_size, filters, in); bias: (filters,)
#include "layers/config_utils.h"
#include "layers/convolutional/base_conv.h"
#include "layers/spatial_config.h"

namespace kerascpp::layers {
namespace {

class BaseConvTranspose : public Layer {
 public:
  BaseConvTranspose(Json given, const char* cls, int rank)
      : Layer(std::move(given)), cls_(cls), s_(config(), cls, rank, true) {
    KCPP_CHECK(s_.options.groups == 1, ValueError, s_.who, " takes no `groups`. Received: groups=", s_.options.groups);
    s_.options.output_padding = int_tuple(config(), "output_padding", rank, {}, 0, s_.who);
    for (size_t i = 0; i < s_.options.output_padding.size(); ++i)
      KCPP_CHECK(s_.options.output_padding[i] < s_.options.strides[i], ValueError, "Strides must be greater than "
                 "output padding in ", s_.who, ". Received strides=", s_.options.strides[i], ", output_padding=",
                 s_.options.output_padding[i]);
  }
  std::string class_name() const override { return cls_; }

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    const int64_t c = s_.channels(in[0]);
    if (kernel_)
      KCPP_CHECK(c == kernel_->shape().back(), ValueError, "Input 0 of ", s_.who, " is incompatible with the layer: "
                 "expected ", kernel_->shape().back(), " channels. Received: input_shape=", shape_str(in[0]));
    std::vector<int64_t> sp = s_.spatial(in[0]);
    for (int i = 0; i < s_.rank; ++i) {
      if (sp[i] < 0) continue;
      const int64_t op = s_.options.output_padding.empty() ? -1 : s_.options.output_padding[i];
      sp[i] = ops::conv_transpose_output_length(sp[i], s_.kernel_size[i], s_.options.strides[i],
                                                s_.options.dilation_rate[i], s_.options.padding, op);
    }
    return {s_.output_shape(in[0], sp, s_.filters)};
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    const Tensor bias = s_.use_bias ? bias_->value() : Tensor();
    return {s_.activation(ops::conv_transpose(in[0], kernel_->value(), bias, s_.options, &plans_,
                                              weights_version(kernel_, bias_)))};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    compute_output_shape(in);
    Shape k(s_.kernel_size.begin(), s_.kernel_size.end());
    k.push_back(s_.filters);
    k.push_back(s_.channels(in[0]));
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

LayerPtr make_base_conv_transpose(Json config, const char* cls, int rank) {
  return std::make_shared<BaseConvTranspose>(std::move(config), cls, rank);
}

}  // namespace kerascpp::layers
