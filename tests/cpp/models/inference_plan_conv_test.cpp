// Inference plans of convolutional graphs (src/models/plan_conv_steps.cpp): convolution, pooling,
// global pooling and zero-padding steps, and the layers a convolution takes into its kernel
// (BatchNormalization folded into its weights, a residual Add and relu as oneDNN post-ops).
// Steps that fuse nothing give the interpreter's result bit for bit; fused ones move by round-off
// only (folding rounds kernel * scale once per weight, and the post-ops add in the kernel's order),
// checked here at 1e-5 of each output's scale. Parity with Keras on ResNet50 and MobileNetV2 is
// `make parity`'s; the small keras.applications models of `make test` run on these plans too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "../test_errors.h"
#include "plan_test_util.h"
#include "kerascpp/kerascpp.h"
#include "models/functional.h"

namespace kerascpp {
namespace {

using layers::Input;
using testing::expect_matches;
using testing::graph_of;
using testing::identical;
using testing::inputs_for;
using testing::ramp;

// Weights away from their initial values, BatchNormalization's statistics included (moving variances
// kept positive), so that folding them matters.
void perturb_weights(Model& m, float by) {
  size_t i = 0;
  for (Layer* layer : m.layers())
    for (const VariablePtr& w : layer->weights()) {
      Tensor t = w->numpy();
      for (int64_t j = 0; j < t.size(); ++j) {
        float& v = t.data<float>()[j];
        v = std::fabs(v + by * static_cast<float>(static_cast<int64_t>((i * 7 + j * 3) % 17) - 8) / 8.f) + 0.05f;
        if ((i + j) % 3 == 0 && w->name() != "moving_variance") v = -v;
      }
      w->assign(t);
      ++i;
    }
}

void expect_plan_matches_graph(const Model& m) {
  const models::Functional& g = graph_of(m);
  const models::InferencePlan* plan = g.inference_plan();
  ASSERT_NE(plan, nullptr) << g.why_not_planned();
  for (int64_t batch : {1, 7, 40}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const std::vector<Tensor> in = inputs_for(m, batch);
    ASSERT_TRUE(plan->takes(in, CallContext{}));
    const std::vector<Tensor> planned = m.predict(in, batch), interpreted = g.call_graph(in, CallContext{});
    ASSERT_EQ(planned.size(), interpreted.size());
    for (size_t j = 0; j < planned.size(); ++j) expect_matches(planned[j], interpreted[j], plan->exact());
    // predict in batches of 16 (then the rest: another primitive per step), each against the
    // interpreter on its rows.
    const std::vector<Tensor> batched = m.predict(in, 16);
    for (int64_t start = 0; start < batch; start += 16) {
      const std::vector<Tensor> want = g.call_graph({in[0].slice(start, std::min<int64_t>(16, batch - start))}, CallContext{});
      for (size_t j = 0; j < want.size(); ++j) expect_matches(batched[j].slice(start, want[j].dim(0)), want[j], plan->exact());
    }
  }
}

// ResNet's blocks: ZeroPadding, a strided convolution, BatchNormalization and relu, max pooling, a
// projection block (a 1x1 convolution on the shortcut) and an identity block (the block's input as the
// shortcut), global average pooling and a classifier.
Model resnet_like() {
  auto x = Input({12, 12, 3}, {{"name", "x"}});
  auto bn = [](const std::string& name) { return layers::BatchNormalization({{"epsilon", 1.001e-5}, {"name", name}}); };
  auto relu = [](const std::string& name) { return layers::Activation({{"activation", "relu"}, {"name", name}}); };
  auto h = layers::ZeroPadding2D({{"padding", 3}, {"name", "pad"}})(x);
  h = layers::Conv2D({{"filters", 8}, {"kernel_size", 7}, {"strides", 2}, {"name", "conv1"}})(h);
  h = relu("relu1")(bn("bn1")(h));
  h = layers::ZeroPadding2D({{"padding", 1}, {"name", "pool_pad"}})(h);
  h = layers::MaxPooling2D({{"pool_size", 3}, {"strides", 2}, {"name", "pool"}})(h);
  auto shortcut = bn("bn_0")(layers::Conv2D({{"filters", 16}, {"kernel_size", 1}, {"name", "conv_0"}})(h));
  auto m = relu("relu_1")(bn("bn_1")(layers::Conv2D({{"filters", 8}, {"kernel_size", 1}, {"name", "conv_1"}})(h)));
  m = relu("relu_2")(bn("bn_2")(layers::Conv2D({{"filters", 8}, {"kernel_size", 3}, {"padding", "same"}, {"name", "conv_2"}})(m)));
  m = bn("bn_3")(layers::Conv2D({{"filters", 16}, {"kernel_size", 1}, {"name", "conv_3"}})(m));
  auto out1 = relu("out1")(layers::Add({{"name", "add1"}})({shortcut, m}));
  auto n = relu("relu_4")(bn("bn_4")(layers::Conv2D({{"filters", 16}, {"kernel_size", 3}, {"padding", "same"}, {"name", "conv_4"}})(out1)));
  n = bn("bn_5")(layers::Conv2D({{"filters", 16}, {"kernel_size", 1}, {"name", "conv_5"}})(n));
  auto out2 = relu("out2")(layers::Add({{"name", "add2"}})({out1, n}));
  auto y = layers::Dense({{"units", 5}, {"name", "logits"}})(layers::GlobalAveragePooling2D({{"name", "gap"}})(out2));
  Model model({x}, {y}, "resnet_like");
  perturb_weights(model, 0.3f);
  return model;
}

TEST(InferencePlanConv, AResNetBlockRunsAsOneKernelPerConvolution) {
  Model m = resnet_like();
  const models::InferencePlan* plan = graph_of(m).inference_plan();
  ASSERT_NE(plan, nullptr) << graph_of(m).why_not_planned();
  // 7 convolutions take in 7 BatchNormalizations, the 4 relus after them and 2 Adds with their relus;
  // conv1 and the pooling pad their inputs themselves.
  EXPECT_EQ(plan->fused(), 7u + 4u + 2u + 2u + 2u);
  EXPECT_EQ(plan->steps(), 7u + 1u + 1u + 1u);  // 7 convolutions, pooling, GAP, Dense
  EXPECT_FALSE(plan->exact());
  expect_plan_matches_graph(m);
  // New weights and statistics (assign() bumps their versions) are folded again at the next call.
  perturb_weights(m, 0.7f);
  expect_plan_matches_graph(m);
}

// MobileNetV2's pieces: relu6 as ReLU(6), a depthwise convolution, a linear bottleneck, average
// pooling and global max pooling with keepdims.
TEST(InferencePlanConv, DepthwiseConvolutionsAndRelu6) {
  auto x = Input({10, 10, 4}, {{"name", "x"}});
  auto h = layers::Conv2D({{"filters", 8}, {"kernel_size", 3}, {"strides", 2}, {"padding", "same"}, {"use_bias", false}, {"name", "c"}})(x);
  h = layers::ReLU({{"max_value", 6.0}, {"name", "r6"}})(layers::BatchNormalization({{"name", "bn"}})(h));
  h = layers::DepthwiseConv2D({{"kernel_size", 3}, {"padding", "same"}, {"depth_multiplier", 2}, {"name", "dw"}})(h);
  h = layers::ReLU({{"max_value", 6.0}, {"name", "dw_r6"}})(layers::BatchNormalization({{"name", "dw_bn"}})(h));
  h = layers::BatchNormalization({{"name", "p_bn"}})(layers::Conv2D({{"filters", 6}, {"kernel_size", 1}, {"name", "p"}})(h));
  h = layers::AveragePooling2D({{"pool_size", 2}, {"padding", "same"}, {"name", "avg"}})(h);
  h = layers::GlobalMaxPooling2D({{"keepdims", true}, {"name", "gmp"}})(h);
  Model m({x}, {layers::Flatten({{"name", "flat"}})(h)});
  perturb_weights(m, 0.4f);
  ASSERT_NE(graph_of(m).inference_plan(), nullptr) << graph_of(m).why_not_planned();
  EXPECT_EQ(graph_of(m).inference_plan()->fused(), 5u);
  expect_plan_matches_graph(m);
}

// Steps that fuse nothing call the interpreter's kernels: Conv1D (causal), Conv3D, channels_first,
// an activation oneDNN does not run (applied after, so no BatchNormalization is folded past it),
// pooling, padding, global pooling.
TEST(InferencePlanConv, UnfusedStepsAreBitIdenticalToTheInterpreter) {
  {
    auto x = Input({16, 3}, {{"name", "x"}});
    auto h = layers::Conv1D({{"filters", 4}, {"kernel_size", 3}, {"padding", "causal"}, {"dilation_rate", 2},
                             {"activation", "sigmoid"}, {"name", "c1"}})(x);
    h = layers::BatchNormalization({{"name", "bn"}})(h);
    h = layers::ZeroPadding1D({{"padding", 1}, {"name", "zp"}})(
        layers::MaxPooling1D({{"pool_size", 2}, {"name", "mp"}})(h));
    Model m({x}, {layers::GlobalAveragePooling1D({{"name", "gap"}})(h), h});
    perturb_weights(m, 0.2f);
    ASSERT_NE(graph_of(m).inference_plan(), nullptr) << graph_of(m).why_not_planned();
    EXPECT_EQ(graph_of(m).inference_plan()->fused(), 0u);
    EXPECT_TRUE(graph_of(m).inference_plan()->exact());
    expect_plan_matches_graph(m);
  }
  {
    auto x = Input({3, 6, 6}, {{"name", "x"}});
    auto h = layers::Conv2D({{"filters", 5}, {"kernel_size", 3}, {"data_format", "channels_first"}, {"activation", "tanh"},
                             {"name", "cf"}})(x);
    h = layers::AveragePooling2D({{"pool_size", 2}, {"data_format", "channels_first"}, {"name", "ap"}})(h);
    h = layers::GlobalAveragePooling2D({{"data_format", "channels_first"}, {"name", "gap"}})(h);
    Model m({x}, {h});
    perturb_weights(m, 0.2f);
    ASSERT_NE(graph_of(m).inference_plan(), nullptr) << graph_of(m).why_not_planned();
    EXPECT_TRUE(graph_of(m).inference_plan()->exact());
    expect_plan_matches_graph(m);
  }
  {
    auto x = Input({4, 5, 6, 2}, {{"name", "x"}});
    auto h = layers::Conv3D({{"filters", 3}, {"kernel_size", 2}, {"padding", "same"}, {"name", "c3"}})(x);
    h = layers::ZeroPadding3D({{"padding", 1}, {"name", "zp3"}})(h);
    Model m({x}, {layers::MaxPooling3D({{"pool_size", 2}, {"name", "mp3"}})(h), h});  // zp3 read twice
    perturb_weights(m, 0.2f);
    ASSERT_NE(graph_of(m).inference_plan(), nullptr) << graph_of(m).why_not_planned();
    EXPECT_TRUE(graph_of(m).inference_plan()->exact());
    expect_plan_matches_graph(m);
  }
}

// A ZeroPadding read by a convolution alone is that convolution's own padding (MobileNetV2 pads before
// each strided depthwise convolution), and one read by a MaxPooling alone (ResNet's pool1_pad) that
// pooling's: the padded copy is never made, and the results move by round-off at most (oneDNN may run
// another algorithm on the smaller input).
TEST(InferencePlanConv, AZeroPaddingBeforeAConvolutionOrMaxPoolingIsItsOwnPadding) {
  {
    auto x = Input({9, 9, 4}, {{"name", "x"}});
    auto h = layers::ZeroPadding2D(
        {{"padding", Json::array({Json::array({0, 1}), Json::array({0, 1})})}, {"name", "zp1"}})(x);
    h = layers::DepthwiseConv2D({{"kernel_size", 3}, {"strides", 2}, {"name", "dw"}})(h);
    h = layers::ReLU({{"max_value", 6.0}, {"name", "r6"}})(layers::BatchNormalization({{"name", "bn"}})(h));
    h = layers::ZeroPadding2D(
        {{"padding", Json::array({Json::array({1, 2}), Json::array({3, 0})})}, {"name", "zp2"}})(h);
    h = layers::Conv2D(
        {{"filters", 3}, {"kernel_size", 3}, {"strides", 2}, {"padding", "same"}, {"name", "c"}})(h);
    Model m({x}, {h});
    perturb_weights(m, 0.3f);
    const models::InferencePlan* plan = graph_of(m).inference_plan();
    ASSERT_NE(plan, nullptr) << graph_of(m).why_not_planned();
    EXPECT_EQ(plan->steps(), 2u);
    EXPECT_EQ(plan->fused(), 2u + 2u);  // the paddings, and bn and r6 into dw
    EXPECT_EQ(m.output_shapes()[0], (Shape{-1, 4, 4, 3}));
    expect_plan_matches_graph(m);
  }
  {  // a padding that keeps the shape, then the convolution takes in the residual Add and relu after it;
     // dilation, groups, asymmetric channels_first padding, MaxPooling3D
    auto x = Input({6, 6, 4}, {{"name", "x"}});
    auto c = layers::Conv2D({{"filters", 4}, {"kernel_size", 3}, {"name", "c"}})(
        layers::ZeroPadding2D({{"padding", 1}, {"name", "zp"}})(x));
    auto r =
        layers::Activation({{"activation", "relu"}, {"name", "r"}})(layers::Add({{"name", "add"}})({x, c}));
    auto d = layers::Conv2D(
        {{"filters", 6}, {"kernel_size", 3}, {"dilation_rate", 2}, {"groups", 2}, {"name", "d"}})(
        layers::ZeroPadding2D(
            {{"padding", Json::array({Json::array({2, 1}), Json::array({0, 3})})}, {"name", "zd"}})(r));
    auto y = Input({2, 5, 7}, {{"name", "y"}});
    auto f = layers::Conv2D({{"filters", 3},
                             {"kernel_size", 2},
                             {"strides", 2},
                             {"data_format", "channels_first"},
                             {"name", "f"}})(
        layers::ZeroPadding2D({{"padding", Json::array({Json::array({0, 2}), Json::array({3, 1})})},
                               {"data_format", "channels_first"},
                               {"name", "zf"}})(y));
    auto z = Input({3, 4, 5, 2}, {{"name", "z"}});
    auto p3 = layers::MaxPooling3D({{"pool_size", 2}, {"name", "p3"}})(
        layers::ZeroPadding3D({{"padding", Json::array({1, 0, 2})}, {"name", "z3"}})(z));
    std::vector<std::pair<Model, size_t>> models = {
        {Model({x}, {d}), 2u}, {Model({y}, {f}), 1u}, {Model({z}, {p3}), 1u}};
    for (auto& [m, steps] : models) {
      SCOPED_TRACE(m.layers().back()->name());
      perturb_weights(m, 0.2f);
      ASSERT_NE(graph_of(m).inference_plan(), nullptr) << graph_of(m).why_not_planned();
      EXPECT_EQ(graph_of(m).inference_plan()->steps(), steps);
      expect_plan_matches_graph(m);
    }
    EXPECT_EQ(graph_of(models[0].first).inference_plan()->fused(), 1u + 2u + 1u);  // zp, add and r into c; zd
  }
  {  // padding wider than the kernel: the outputs it alone covers are the bias
    auto x = Input({5, 4, 2}, {{"name", "x"}});
    auto h = layers::ZeroPadding2D({{"padding", 3}, {"name", "zp"}})(x);
    Model m({x}, {layers::Conv2D({{"filters", 3}, {"kernel_size", 2}, {"name", "c"}})(h)});
    perturb_weights(m, 0.2f);
    ASSERT_NE(graph_of(m).inference_plan(), nullptr) << graph_of(m).why_not_planned();
    EXPECT_EQ(graph_of(m).inference_plan()->steps(), 1u);
    expect_plan_matches_graph(m);
  }
  {  // Conv1D (causal), Conv3D and channels_first, each after its padding
    auto x = Input({12, 3}, {{"name", "x"}});
    auto h = layers::ZeroPadding1D({{"padding", Json::array({2, 1})}, {"name", "zp"}})(x);
    h = layers::Conv1D(
        {{"filters", 4}, {"kernel_size", 3}, {"padding", "causal"}, {"dilation_rate", 2}, {"name", "c1"}})(h);
    Model m({x}, {h});
    perturb_weights(m, 0.2f);
    ASSERT_NE(graph_of(m).inference_plan(), nullptr) << graph_of(m).why_not_planned();
    EXPECT_EQ(graph_of(m).inference_plan()->steps(), 1u);
    expect_plan_matches_graph(m);
  }
  {
    auto x = Input({4, 5, 6, 2}, {{"name", "x"}});
    auto h = layers::ZeroPadding3D({{"padding", Json::array({1, 0, 2})}, {"name", "zp3"}})(x);
    Model m({x}, {layers::Conv3D({{"filters", 3}, {"kernel_size", 2}, {"strides", 2}, {"name", "c3"}})(h)});
    perturb_weights(m, 0.2f);
    ASSERT_NE(graph_of(m).inference_plan(), nullptr) << graph_of(m).why_not_planned();
    EXPECT_EQ(graph_of(m).inference_plan()->steps(), 1u);
    expect_plan_matches_graph(m);
  }
  {
    auto x = Input({3, 6, 7}, {{"name", "x"}});
    auto h = layers::ZeroPadding2D(
        {{"padding", Json::array({1, 2})}, {"data_format", "channels_first"}, {"name", "zp"}})(x);
    h = layers::Conv2D(
        {{"filters", 5}, {"kernel_size", 3}, {"data_format", "channels_first"}, {"name", "cf"}})(h);
    Model m({x}, {h});
    perturb_weights(m, 0.2f);
    ASSERT_NE(graph_of(m).inference_plan(), nullptr) << graph_of(m).why_not_planned();
    EXPECT_EQ(graph_of(m).inference_plan()->steps(), 1u);
    expect_plan_matches_graph(m);
  }
  {  // MaxPooling with padding "valid": the padding's zeros count (here for windows of negatives, or
     // of one sample only), as they do in the padded copy
    auto x = Input({7, 7, 3}, {{"name", "x"}});
    auto h = layers::ZeroPadding2D(
        {{"padding", Json::array({Json::array({2, 1}), Json::array({1, 2})})}, {"name", "zp"}})(x);
    auto y = Input({3, 6, 5}, {{"name", "y"}});
    auto p = layers::ZeroPadding2D({{"padding", 2}, {"data_format", "channels_first"}, {"name", "zp_cf"}})(y);
    auto z = Input({9, 2}, {{"name", "z"}});
    auto w = Input({6, 2}, {{"name", "w"}});  // windows of padding alone: 0
    const std::vector<Model> models = {
        Model({x}, {layers::MaxPooling2D({{"pool_size", 3}, {"strides", 2}, {"name", "mp"}})(h)}),
        Model({y}, {layers::MaxPooling2D(
                       {{"pool_size", 3}, {"data_format", "channels_first"}, {"name", "mp_cf"}})(p)}),
        Model({z}, {layers::MaxPooling1D({{"pool_size", 2}, {"name", "mp1"}})(
                       layers::ZeroPadding1D({{"padding", 1}, {"name", "zp1"}})(z))}),
        Model({w}, {layers::MaxPooling1D({{"pool_size", 2}, {"name", "mp_wide"}})(
                       layers::ZeroPadding1D({{"padding", Json::array({4, 3})}, {"name", "zp_wide"}})(w))})};
    for (const Model& m : models) {
      SCOPED_TRACE(m.layers().back()->name());
      const models::InferencePlan* plan = graph_of(m).inference_plan();
      ASSERT_NE(plan, nullptr) << graph_of(m).why_not_planned();
      EXPECT_EQ(plan->steps(), 1u);
      EXPECT_FALSE(plan->exact());
      expect_plan_matches_graph(m);
      const Tensor want = graph_of(m).call_graph(inputs_for(m, 2), CallContext{})[0];
      EXPECT_TRUE(identical(m.predict(inputs_for(m, 2), 2)[0], want));  // a maximum is exact
      EXPECT_GT(std::count(want.data<float>(), want.data<float>() + want.size(), 0.f), 0);
    }
  }
  {  // AveragePooling, and MaxPooling with padding "same" (whose own padding never counts), keep the
     // padding as a step of its own
    auto x = Input({6, 6, 2}, {{"name", "x"}});
    auto a = layers::AveragePooling2D({{"pool_size", 2}, {"name", "ap"}})(
        layers::ZeroPadding2D({{"padding", 1}, {"name", "za"}})(x));
    auto b = layers::MaxPooling2D({{"pool_size", 3}, {"padding", "same"}, {"name", "mp"}})(
        layers::ZeroPadding2D({{"padding", 1}, {"name", "zb"}})(x));
    Model m({x}, {a, b});
    const models::InferencePlan* plan = graph_of(m).inference_plan();
    ASSERT_NE(plan, nullptr) << graph_of(m).why_not_planned();
    EXPECT_EQ(plan->steps(), 4u);
    EXPECT_TRUE(plan->exact());
    expect_plan_matches_graph(m);
  }
  {  // a padding read twice (by the convolution and as an output) is a step of its own, as is one a
     // convolution of the other data format reads (it pads the channels)
    auto x = Input({6, 6, 5}, {{"name", "x"}});
    auto p = layers::ZeroPadding2D({{"padding", 1}, {"name", "zp"}})(x);
    auto c = layers::Conv2D({{"filters", 3}, {"kernel_size", 3}, {"name", "c"}})(p);
    auto q = layers::ZeroPadding2D({{"padding", 1}, {"name", "zq"}})(x);
    auto cf = layers::Conv2D(
        {{"filters", 3}, {"kernel_size", 3}, {"data_format", "channels_first"}, {"name", "cf"}})(q);
    Model m({x}, {c, p, cf});
    perturb_weights(m, 0.2f);
    const models::InferencePlan* plan = graph_of(m).inference_plan();
    ASSERT_NE(plan, nullptr) << graph_of(m).why_not_planned();
    EXPECT_EQ(plan->steps(), 4u);
    EXPECT_EQ(plan->fused(), 0u);
    EXPECT_TRUE(plan->exact());
    expect_plan_matches_graph(m);
  }
}

// A convolution whose output is read twice (or is a graph output) takes nothing in; an Add takes in
// the later of two convolutions; an Add of a convolution and that convolution's own input (a value in
// the workspace) reads the input twice, so the output cannot go over it: the step copies it first.
TEST(InferencePlanConv, FusionOnlyWhereTheConvolutionIsTheSoleReader) {
  auto x = Input({6, 6, 4}, {{"name", "x"}});
  auto a = layers::Conv2D({{"filters", 4}, {"kernel_size", 3}, {"padding", "same"}, {"name", "a"}})(x);
  auto a_bn = layers::BatchNormalization({{"name", "a_bn"}})(a);  // a is also an output: not folded
  auto b = layers::Conv2D({{"filters", 4}, {"kernel_size", 1}, {"name", "b"}})(x);
  auto c = layers::Conv2D({{"filters", 4}, {"kernel_size", 1}, {"name", "c"}})(x);
  auto bc = layers::Add({{"name", "bc"}})({b, c});  // into c, which runs after b
  auto h = layers::Conv2D({{"filters", 4}, {"kernel_size", 1}, {"name", "h"}})(x);
  auto xc = layers::Add({{"name", "xc"}})({h, layers::Conv2D({{"filters", 4}, {"kernel_size", 3}, {"padding", "same"}, {"name", "d"}})(h)});
  auto sum = layers::Add({{"name", "all"}})({a_bn, bc, xc});  // three inputs: a step of its own
  Model m({x}, {sum, a});
  perturb_weights(m, 0.3f);
  const models::InferencePlan* plan = graph_of(m).inference_plan();
  ASSERT_NE(plan, nullptr) << graph_of(m).why_not_planned();
  EXPECT_EQ(plan->fused(), 2u);  // bc into c, xc into d
  expect_plan_matches_graph(m);
}

// InceptionResNetV2's residual, CustomScaleLayer(scale)([x, conv(...)]) and relu: the scale folds into
// the convolution's weights and the sum and relu run as its post-ops. A CustomScaleLayer whose residual
// no convolution writes is a step of its own, bit for bit the layer's.
TEST(InferencePlanConv, CustomScaleLayerRunsInsideTheConvolution) {
  auto x = Input({6, 6, 8}, {{"name", "x"}});
  auto a = layers::Conv2D({{"filters", 8}, {"kernel_size", 1}, {"activation", "relu"}, {"name", "a"}})(x);
  auto up = layers::Conv2D({{"filters", 8}, {"kernel_size", 3}, {"padding", "same"}, {"name", "up"}})(a);
  auto s = layers::layer("CustomScaleLayer", {{"scale", 0.17}, {"name", "scale"}})({a, up});
  auto r = layers::Activation({{"activation", "relu"}, {"name", "r"}})(s);
  Model m({x}, {r});
  perturb_weights(m, 0.3f);
  ASSERT_NE(graph_of(m).inference_plan(), nullptr) << graph_of(m).why_not_planned();
  EXPECT_EQ(graph_of(m).inference_plan()->fused(), 2u);
  expect_plan_matches_graph(m);

  auto y = Input({6, 6, 8}, {{"name", "y"}});
  auto t = layers::Activation({{"activation", "tanh"}, {"name", "t"}})(y);
  Model alone({y}, {layers::layer("CustomScaleLayer", {{"scale", 0.5}, {"name", "scale"}})({y, t})});
  ASSERT_NE(graph_of(alone).inference_plan(), nullptr) << graph_of(alone).why_not_planned();
  EXPECT_TRUE(graph_of(alone).inference_plan()->exact());
  expect_plan_matches_graph(alone);
}

// 40 samples of 64x64x16 floats of values (conv a's output; b writes the graph output) pass kChunkBytes: the call
// runs in chunks, each what predict in batches of that size gives, and all close to the interpreter.
TEST(InferencePlanConv, ABigBatchOfBigSamplesRunsInChunks) {
  auto x = Input({64, 64, 8}, {{"name", "x"}});
  auto h = layers::Conv2D({{"filters", 16}, {"kernel_size", 3}, {"padding", "same"}, {"activation", "relu"}, {"name", "a"}})(x);
  h = layers::Conv2D({{"filters", 16}, {"kernel_size", 3}, {"padding", "same"}, {"name", "b"}})(h);
  Model m({x}, {layers::GlobalAveragePooling2D({{"name", "gap"}})(h), h});
  perturb_weights(m, 0.1f);
  const models::InferencePlan* plan = graph_of(m).inference_plan();
  ASSERT_NE(plan, nullptr) << graph_of(m).why_not_planned();
  const int64_t chunk = plan->chunk_rows(40);
  EXPECT_LT(chunk, 40);
  EXPECT_EQ(chunk, static_cast<int64_t>(models::InferencePlan::kChunkBytes) / (plan->floats_per_row() * 4));
  EXPECT_EQ(plan->chunk_rows(1), 1);
  const std::vector<Tensor> in = inputs_for(m, 40);
  const std::vector<Tensor> whole = m.predict(in, 40), batched = m.predict(in, chunk);
  const std::vector<Tensor> interpreted = graph_of(m).call_graph(in, CallContext{});
  for (size_t j = 0; j < whole.size(); ++j) {
    EXPECT_TRUE(identical(whole[j], batched[j])) << "output " << j;
    expect_matches(whole[j], interpreted[j], false);
  }
}

TEST(InferencePlanConv, ConcurrentCallsOfSeveralBatchSizesAgree) {
  Model m = resnet_like();
  std::vector<std::vector<Tensor>> want;
  for (int64_t batch : {1, 3, 9}) want.push_back(m.predict(inputs_for(m, batch), batch));
  std::vector<std::thread> threads;
  std::vector<int> bad(6, 0);
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const int k = (t + i) % 3;
        const int64_t batch = k == 0 ? 1 : (k == 1 ? 3 : 9);
        if (!identical(m.predict(inputs_for(m, batch), batch)[0], want[k][0])) ++bad[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 6; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
}

TEST(InferencePlanConv, AWrongInputShapeGetsTheInterpretersError) {
  Model m = resnet_like();
  const std::string e = testing::error_of([&] { m.predict({ramp({2, 12, 11, 3})}); });
  EXPECT_NE(e.find("expected shape=(None, 12, 12, 3), found shape=(2, 12, 11, 3)"), std::string::npos) << e;
}

}  // namespace
}  // namespace kerascpp
