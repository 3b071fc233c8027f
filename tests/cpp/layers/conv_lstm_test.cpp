// ConvLSTM1D / 2D / 3D beyond what the Keras fixtures show (tests/fixtures/seq_conv_lstm*: predictions
// of both writers, both data formats, strides, dilation, initial_state, Bidirectional): gradients
// through time against finite differences, masks holding the state, dropout in training, the errors.
#include <gtest/gtest.h>

#include <random>

#include "../test_errors.h"
#include "kerascpp/autodiff.h"
#include "kerascpp/layer.h"
#include "layer_test_util.h"
#include "ops/ops.h"

namespace kerascpp {
namespace {

using testing::error_of;

LayerPtr conv_lstm(const std::string& cls, Json extra, const Shape& input) {
  Json c = {{"name", "c"}, {"filters", 2}, {"kernel_size", 2}, {"recurrent_activation", "sigmoid"}};
  for (const auto& [k, v] : extra.items()) c[k] = v;
  LayerPtr l = make_layer(cls, c);
  l->build({input});
  std::mt19937 g(12);
  std::vector<Tensor> w;
  for (const VariablePtr& v : l->weights()) w.push_back(random(g, v->shape()));
  l->set_weights(w);
  return l;
}

TEST(ConvLstm, WeightAndInputGradientsThroughTimeMatchFiniteDifferences) {
  struct Case {
    const char* cls;
    Json extra;
    Shape input;
  };
  const Case cases[] = {
      {"ConvLSTM1D", {{"padding", "same"}, {"return_sequences", true}}, {2, 3, 5, 2}},
      {"ConvLSTM2D", {{"strides", 2}, {"go_backwards", true}}, {2, 3, 5, 4, 2}},
      {"ConvLSTM2D", {{"data_format", "channels_first"}, {"padding", "same"}, {"return_sequences", true}}, {1, 3, 2, 3, 4}},
      {"ConvLSTM3D", {{"use_bias", false}}, {1, 2, 3, 3, 3, 1}},
  };
  const Tensor mask = Tensor::from_vector({2, 3}, {1, 0, 1, 1, 1, 0});  // (batch, steps) cut to each case
  for (const Case& c : cases) {
    LayerPtr l = conv_lstm(c.cls, c.extra, c.input);
    std::mt19937 g(7);
    const Tensor x = random(g, c.input);
    const std::vector<Tensor> masks{ops::slice(mask, {0, 0}, {c.input[0], c.input[1]})};
    CallContext ctx;
    ctx.masks = &masks;
    std::string where;
    // float32 forward passes with a step of 1e-2: errors of a few 1e-3 at most; a wrong gradient is O(1).
    EXPECT_LE(worst_weight_gradient_error(*l, {x}, ctx, &where), 2e-2) << c.cls << " " << c.extra.dump() << ": " << where;
    const GradientCheck in = check_gradients([&](const std::vector<Tensor>& t) { return l->call(t, {})[0]; }, {x}, 1e-2);
    EXPECT_LE(in.max_error, 2e-2) << c.cls << " " << c.extra.dump() << ": " << in.worst;
  }
}

TEST(ConvLstm, MaskedStepsKeepTheStatesAndDropoutActsOnlyInTraining) {
  LayerPtr l = conv_lstm("ConvLSTM2D", {{"padding", "same"}, {"return_state", true}, {"dropout", 0.5},
                                        {"recurrent_dropout", 0.5}}, {2, 3, 4, 4, 1});
  std::mt19937 g(8);
  const Tensor x = random(g, {2, 3, 4, 4, 1});
  // Sample 0 masks its last step: its outputs and states are those of the first two steps alone.
  const std::vector<Tensor> masks{Tensor::from_vector({2, 3}, {1, 1, 0, 1, 1, 1})};
  CallContext masked;
  masked.masks = &masks;
  const std::vector<Tensor> full = l->call({x}, masked);
  const std::vector<Tensor> two = l->call({ops::slice(x, {0, 0, 0, 0, 0}, {2, 2, 4, 4, 1})}, {});
  ASSERT_EQ(full.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    ASSERT_EQ(full[k].shape(), Shape({2, 4, 4, 2}));
    for (int64_t i = 0; i < 32; ++i) EXPECT_FLOAT_EQ(full[k].data<float>()[i], two[k].data<float>()[i]) << k << " " << i;
  }
  CallContext training;
  training.training = true;
  const Tensor a = l->call({x}, training)[0], b = l->call({x}, {})[0];
  double diff = 0;
  for (int64_t i = 0; i < a.size(); ++i) diff += std::abs(a.data<float>()[i] - b.data<float>()[i]);
  EXPECT_GT(diff, 1e-3) << "dropout changes the outputs in training";
}

TEST(ConvLstm, ErrorsNameTheLayerAndTheValue) {
  EXPECT_NE(error_of([] { make_layer("ConvLSTM2D", {{"name", "n"}, {"kernel_size", 3}}); })
                .find("Missing `filters` in the config of layer 'n' (ConvLSTM2D)"),
            std::string::npos);
  const std::string dynamic = error_of([] {
    make_layer("ConvLSTM2D", {{"name", "s"}, {"filters", 2}, {"kernel_size", 3}})->build({{-1, 4, -1, 5, 1}});
  });
  EXPECT_NE(dynamic.find("ConvLSTM layers only support static input shapes for the spatial dimension. Layer 's/conv_lstm_cell' "
                         "received: input_shape=(None, None, 5, 1)"),
            std::string::npos) << dynamic;
  LayerPtr l = conv_lstm("ConvLSTM2D", {}, {2, 3, 5, 4, 2});
  EXPECT_NE(error_of([&] { l->compute_output_shape({{2, 3, 5, 2}}); }).find("expected ndim=5, found ndim=4"),
            std::string::npos);
  EXPECT_NE(error_of([&] { l->compute_output_shape({{2, 3, 5, 4, 2}, {2, 5, 4, 2}, {2, 4, 3, 2}}); })
                .find("Initial state 0 of layer 'c' (ConvLSTM2D) must have shape (2, 4, 3, 2). Received: (2, 5, 4, 2)"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_layer("ConvLSTM2D", {{"name", "z"}, {"filters", 0}, {"kernel_size", 3}}); })
                .find("Invalid value for argument `filters` of layer 'z' (ConvLSTM2D)"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_layer("ConvLSTM2D", {{"name", "d"}, {"filters", 2}, {"kernel_size", 3}, {"strides", 2}, {"dilation_rate", 2}}); })
                .find("`strides > 1` is not compatible with `dilation_rate > 1`"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_layer("ConvLSTM1D", {{"name", "p"}, {"filters", 2}, {"kernel_size", 3}, {"padding", "causal"}}); })
                .find("only Conv1D accepts \"causal\""),
            std::string::npos);
}

}  // namespace
}  // namespace kerascpp
