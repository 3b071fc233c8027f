// keras.layers.ConvLSTM1D / ConvLSTM2D / ConvLSTM3D (keras/src/layers/rnn/conv_lstm.py): an LSTM whose
// two products are convolutions, run over time by the RNN layer (rnn.h) with its options and masks.
//   sequences (batch, steps, *spatial, channels) (channels_first: (batch, steps, channels, *spatial))
//   -> (batch, *out_spatial, filters), or (batch, steps, *out_spatial, filters) with return_sequences.
// The cell's kernel (*kernel_size, channels, 4 filters) convolves each step's input with the layer's
// strides, padding and dilation, and bias; recurrent_kernel (*kernel_size, filters, 4 filters) convolves
// h with stride 1 and "same" padding. The gates i, f, c, o are the four channel blocks of their sum, as
// in LSTMCell: c = f * c_prev + i * activation(z_c), h = o * activation(c). States h and c have the
// output's shape. Every step's input convolution runs at once, as one convolution over batch * steps
// frames. Training: dropout and recurrent_dropout draw one mask per sequence for all four gates (tf_keras
// draws one per gate; the random values never match Keras's anyway).
#include <algorithm>

#include "layers/config_utils.h"
#include "layers/convolutional/base_conv.h"
#include "layers/layer_list.h"
#include "layers/rnn/rnn.h"
#include "layers/spatial_config.h"

namespace kerascpp::layers {
namespace {

Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::add, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(ops::BinaryOp::multiply, a, b); }

// The cell's config: the layer's cell keys (training finds regularizers and constraints there,
// training/compile.cpp), with units := filters for RnnCell.
Json cell_config(const Json& layer, const std::string& cls) {
  const std::string who = layer_who(layer.value("name", std::string("?")), cls);
  KCPP_CHECK(layer.contains("filters"), ValueError, "Missing `filters` in the config of ", who);
  KCPP_CHECK(layer["filters"].is_number_integer() && layer["filters"].get<int64_t>() > 0, ValueError,
             "Invalid value for argument `filters` of ", who, ". Expected a strictly positive value. Received filters=",
             layer["filters"].dump());
  Json c = Json::object();
  for (const char* k : {"activation", "recurrent_activation", "use_bias", "dropout", "recurrent_dropout",
                        "kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "dtype", "trainable",
                        "kernel_initializer", "recurrent_initializer", "bias_initializer", "unit_forget_bias",
                        "kernel_constraint", "recurrent_constraint", "bias_constraint"})
    if (layer.contains(k)) c[k] = layer[k];
  c["units"] = layer.value("filters", Json());
  c["name"] = layer.value("name", std::string()) + "/conv_lstm_cell";  // Keras names the cell so
  return c;
}

class ConvLstmCell : public RnnCell {
 public:
  bool fast_project(const float*, float*, int64_t) const override { return false; }  // a convolution
  ConvLstmCell(const Json& layer, const std::string& cls, int rank)
      : RnnCell(cell_config(layer, cls), "ConvLSTMCell", 4), s_(layer, cls, rank, true) {
    auto above_one = [](const std::vector<int64_t>& v) { return std::any_of(v.begin(), v.end(), [](int64_t d) { return d > 1; }); };
    KCPP_CHECK(!above_one(s_.options.strides) || !above_one(s_.options.dilation_rate), ValueError, "Specifying `strides > 1` "
               "is not compatible with `dilation_rate > 1` (", s_.who, "). Please provide `strides=1` or `dilation_rate=1`");
    recurrent_options_ = s_.options;
    recurrent_options_.strides.assign(rank, 1);
    recurrent_options_.dilation_rate.assign(rank, 1);
    recurrent_options_.padding = ops::Padding::same;
  }
  size_t state_count() const override { return 2; }
  size_t step_rank() const override { return s_.rank + 2; }
  Shape state_shape(size_t, const Shape& step) const override {
    return s_.output_shape(step, s_.conv_output_spatial(step), s_.filters);
  }
  void initialize(std::mt19937_64& rng) override {
    RnnCell::initialize(rng);
    unit_forget_bias();
  }

  Tensor project(const Tensor& x) const override {
    Shape frames = x.shape();  // (batch * steps, *spatial, channels): every step's frame at once
    frames[1] *= frames[0];
    frames.erase(frames.begin());
    const Tensor bias = use_bias_ ? bias_->value() : Tensor();
    const Tensor y = ops::conv(x.reshape(frames), kernel_->value(), bias, s_.options, &plans_,
                               weights_version(kernel_, bias_));
    Shape out = y.shape();
    out[0] = x.dim(1);
    out.insert(out.begin(), x.dim(0));
    return y.reshape(out);
  }

  std::vector<Tensor> step(const Tensor& xp, const std::vector<Tensor>& s, const Tensor& rm) const override {
    const Tensor h = rm.defined() ? mul(s[0], rm) : s[0];
    const Tensor z = add(xp, ops::conv(h, recurrent_kernel_->value(), Tensor(), recurrent_options_, &recurrent_plans_,
                                       weights_version(recurrent_kernel_, nullptr)));
    const Tensor i = recurrent_activation_(channels(z, 0)), f = recurrent_activation_(channels(z, 1));
    const Tensor c = add(mul(f, s[1]), mul(i, activation_(channels(z, 2))));
    const Tensor o = recurrent_activation_(channels(z, 3));
    return {mul(o, activation_(c)), c};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    const Shape& step = in[0];
    const int64_t channels = s_.channels(step);
    for (int64_t d : s_.spatial(step))
      KCPP_CHECK(d > 0, ValueError, "ConvLSTM layers only support static input shapes for the spatial dimension. "
                 "Layer '", name(), "' received: input_shape=", shape_str(step));
    Shape k(s_.kernel_size.begin(), s_.kernel_size.end()), r = k;
    k.push_back(channels);
    k.push_back(4 * units_);
    r.push_back(units_);
    r.push_back(4 * units_);
    kernel_ = add_weight("kernel", k);
    recurrent_kernel_ = add_weight("recurrent_kernel", r);
    if (use_bias_) bias_ = add_weight("bias", {4 * units_});
  }

 private:
  // Gate g's channel block of z: (batch, *spatial, filters), channels_first (batch, filters, *spatial).
  Tensor channels(const Tensor& z, int g) const {
    const size_t axis = s_.options.channels_first ? 1 : z.rank() - 1;
    std::vector<int64_t> begin(z.rank(), 0), size = z.shape();
    begin[axis] = g * units_;
    size[axis] = units_;
    return ops::slice(z, begin, size);
  }

  ConvSettings s_;  // the input convolution's: kernel_size, strides, padding, dilation_rate, data_format
  ops::ConvOptions recurrent_options_;
  mutable ops::PlanCache plans_, recurrent_plans_;
};

LayerPtr make_conv_lstm(Json c, const char* cls, int rank) {
  auto cell = std::make_shared<ConvLstmCell>(c, cls, rank);
  return std::make_shared<Rnn>(std::move(c), cls, std::move(cell));
}

}  // namespace

LayerPtr make_conv_lstm1d(Json c) { return make_conv_lstm(std::move(c), "ConvLSTM1D", 1); }
LayerPtr make_conv_lstm2d(Json c) { return make_conv_lstm(std::move(c), "ConvLSTM2D", 2); }
LayerPtr make_conv_lstm3d(Json c) { return make_conv_lstm(std::move(c), "ConvLSTM3D", 3); }

}  // namespace kerascpp::layers
