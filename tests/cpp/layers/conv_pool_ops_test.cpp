// Convolution and pooling op nodes (conv_pool_ops*.cpp): each op's backward against central finite
// differences (to the kernel too, given as a tensor), its inferred shape, values TensorFlow / Keras
// computed for what the fixtures cannot hold (tf.nn.conv*_transpose needs tf.shape for its batch;
// Keras 3 cannot run its ConvTranspose node nor reload the adaptive pools), and the errors.
#include <gtest/gtest.h>

#include <random>

#include "../test_errors.h"
#include "kerascpp/autodiff.h"
#include "kerascpp/kerascpp.h"
#include "op_node_testing.h"

namespace kerascpp {
namespace {
using testing::error_of;

using namespace op_node_testing;  // NOLINT: the helpers of every op node test

// The values the Python script that made the references used: exact binary fractions.
Tensor ramp_x(const Shape& s) {
  Tensor t = Tensor::empty(s);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>((i * 7) % 11 - 5) * 0.125f;
  return t;
}
Tensor ramp_k(const Shape& s) {
  Tensor t = Tensor::empty(s);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>((i * 5) % 9 - 4) * 0.25f;
  return t;
}

void expect_values(const Tensor& y, const Shape& shape, const std::vector<float>& want, float tol = 1e-6f) {
  ASSERT_EQ(y.shape(), shape);
  ASSERT_EQ(static_cast<size_t>(y.size()), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y.data<float>()[i], want[i], tol) << "at " << i;
}

Tensor run(const LayerPtr& op, const std::vector<Tensor>& in) {
  std::vector<Shape> shapes;
  for (const Tensor& t : in) shapes.push_back(t.shape());
  const Tensor y = op->call(in, CallContext{})[0];
  EXPECT_EQ(op->compute_output_shape(shapes)[0], y.shape());
  return y;
}

const Json xk = Json::array({in(0), in(1)});
const Json x0 = Json::array({in(0)});

TEST(ConvPoolOps, KerasConvGradients) {
  std::mt19937 g(5);
  const Tensor x = distinct(g, {1, 5, 5, 3}), k = distinct(g, {3, 3, 3, 4});
  expect_gradients(keras_op("nn.Conv", {{"strides", 2}, {"padding", "same"}, {"data_format", "channels_last"}}, xk), {x, k});
  expect_gradients(keras_op("nn.Conv", {{"dilation_rate", {2, 1}}}, xk), {x, k});
  // 1D channels_first, 3D.
  expect_gradients(keras_op("nn.Conv", {{"data_format", "channels_first"}, {"padding", "same"}}, xk),
                   {distinct(g, {2, 3, 7}), distinct(g, {3, 3, 2})});
  expect_gradients(keras_op("nn.Conv", {{"strides", {1, 2, 1}}}, xk), {distinct(g, {1, 4, 3, 4, 2}), distinct(g, {2, 2, 2, 2, 2})});
  expect_gradients(keras_op("nn.DepthwiseConv", {{"padding", "same"}, {"strides", 2}}, xk), {x, distinct(g, {3, 3, 3, 2})});
  expect_gradients(keras_op("nn.DepthwiseConv", {{"data_format", "channels_first"}}, xk),
                   {distinct(g, {2, 3, 4, 5}), distinct(g, {2, 2, 3, 1})});
  expect_gradients(keras_op("nn.SeparableConv", {{"padding", "same"}}, Json::array({in(0), in(1), in(2)})),
                   {x, distinct(g, {2, 2, 3, 2}), distinct(g, {1, 1, 6, 4})});
  expect_gradients(keras_op("nn.ConvTranspose", {{"strides", 2}, {"output_padding", 1}}, xk), {x, distinct(g, {3, 3, 4, 3})});
  expect_gradients(keras_op("nn.ConvTranspose", {{"strides", 2}, {"padding", "same"}}, xk),
                   {distinct(g, {2, 4, 3}), distinct(g, {3, 2, 3})});
}

TEST(ConvPoolOps, KerasPoolGradients) {
  std::mt19937 g(6);
  const Tensor x = distinct(g, {2, 5, 4, 3});
  expect_gradients(keras_op("nn.MaxPool", {{"pool_size", 2}, {"strides", 1}, {"padding", "same"}}, x0), {x});
  expect_gradients(keras_op("nn.MaxPool", {{"pool_size", 2}, {"data_format", "channels_first"}}, x0), {x});
  expect_gradients(keras_op("nn.AveragePool", {{"pool_size", {3, 2}}, {"strides", 2}, {"padding", "same"}}, x0), {x});
  expect_gradients(keras_op("nn.AveragePool", {{"pool_size", 2}}, x0), {distinct(g, {2, 5, 3})});
  expect_gradients(keras_op("nn.AdaptiveMaxPool", {{"output_size", {3, 3}}}, x0), {x});
  expect_gradients(keras_op("nn.AdaptiveAveragePool", {{"output_size", {2, 7}}}, x0), {x});
  expect_gradients(keras_op("nn.AdaptiveAveragePool", {{"output_size", {2, 3}}, {"data_format", "channels_first"}}, x0), {x});
  expect_gradients(keras_op("nn.AdaptiveMaxPool", {{"output_size", {2, 2, 1}}}, x0), {distinct(g, {1, 3, 4, 2, 2})});
  const Tensor img = distinct(g, {2, 3, 5, 4});
  expect_gradients(keras_op("nn.Unfold", {{"kernel_size", 2}, {"padding", 1}, {"stride", 2}, {"dilation", {1, 2}}}, x0), {img});
  expect_gradients(keras_op("nn.Fold", {{"output_size", {5, 4}}, {"kernel_size", 2}}, x0), {distinct(g, {2, 12, 12})});
  expect_gradients(keras_op("nn.Fold", {{"output_size", {5, 4}}, {"kernel_size", {3, 2}}, {"padding", 1}, {"stride", {2, 1}}}, x0),
                   {distinct(g, {1, 6, 15})});
}

TEST(ConvPoolOps, UnfoldFoldAreAdjoint) {  // <unfold(x), c> == <x, fold(c)>, and unfold's layout
  std::mt19937 g(7);
  const Tensor x = distinct(g, {1, 2, 4, 3}), c = distinct(g, {1, 8, 6});
  const Json cfg = {{"kernel_size", 2}, {"padding", {1, 0}}, {"stride", {2, 1}}};
  Json fcfg = cfg;
  fcfg["output_size"] = {4, 3};
  const Tensor u = run(keras_op("nn.Unfold", cfg, x0), {x}), f = run(keras_op("nn.Fold", fcfg, x0), {c});
  ASSERT_EQ(u.shape(), (Shape{1, 8, 6}));
  double a = 0, b = 0;
  for (int64_t i = 0; i < u.size(); ++i) a += u.data<float>()[i] * c.data<float>()[i];
  for (int64_t i = 0; i < x.size(); ++i) b += x.data<float>()[i] * f.data<float>()[i];
  EXPECT_NEAR(a, b, 1e-4);
  // Row (channel 1, ki 1, kj 0), block (oh 0, ow 0) reads x[1, 0, 0] (padding 1 on top).
  EXPECT_EQ(u.data<float>()[(1 * 4 + 2) * 6 + 0], x.data<float>()[1 * 12 + 0]);
  EXPECT_EQ(u.data<float>()[(0 * 4 + 0) * 6 + 0], 0.f);  // the padding row
}

TEST(ConvPoolOps, TfGradients) {
  std::mt19937 g(8);
  const Tensor x = distinct(g, {1, 5, 5, 3}), k = distinct(g, {3, 3, 3, 4});
  expect_gradients(tf_op("nn.conv2d", xk, {{"strides", {1, 2, 2, 1}}, {"padding", "SAME"}}), {x, k});
  expect_gradients(tf_op("compat.v1.nn.conv2d", {in(0)}, {{"filter", in(1)}, {"strides", 1}, {"padding", "VALID"},
                                                          {"use_cudnn_on_gpu", true}, {"data_format", "NHWC"}, {"dilations", 2}}),
                   {x, k});
  expect_gradients(tf_op("compat.v1.nn.depthwise_conv2d", {in(0)}, {{"filter", in(1)}, {"strides", {1, 1, 1, 1}},
                                                                    {"padding", "SAME"}, {"rate", {2, 2}}}),
                   {x, distinct(g, {2, 2, 3, 2})});
  expect_gradients(tf_op("nn.conv2d_transpose", xk, {{"output_shape", {nullptr, 10, 9, 4}}, {"strides", 2}}),
                   {x, distinct(g, {2, 3, 4, 3})});
  expect_gradients(tf_op("nn.max_pool2d", x0, {{"ksize", {1, 3, 2, 1}}, {"strides", {1, 2, 1, 1}}, {"padding", "SAME"}}), {x});
  expect_gradients(tf_op("compat.v1.nn.pool", x0, {{"window_shape", {2, 2}}, {"pooling_type", "AVG"}, {"padding", "VALID"}}), {x});
}

TEST(ConvPoolOps, MatchesTensorFlow) {
  const Tensor x = ramp_x({1, 2, 3, 1}), k = ramp_k({3, 2, 2, 1});
  // tf.nn.conv2d_transpose(x, k, [1, 5, 6, 2], 2, "VALID"), as TensorFlow computed it.
  const std::vector<float> valid = {
      0.625, -0.15625, 0.46875, -0.3125, -0.25,  0.0625,  -0.1875, 0.125,    0.25,    -0.0625,  0.1875,  -0.125,
      0.3125, -0.46875, 0.15625, -0.625, -0.125, 0.1875,  -0.0625, 0.25,     0.125,   -0.1875,  0.0625,  -0.25,
      -0.625, 0.78125, -0.625,  0.78125, -0.125, -0.21875, -0.03125, -0.125,  0.375,   0.15625,  0.21875, 0.0,
      -0.3125, 0.46875, -0.15625, 0.625, -0.0625, 0.09375, -0.03125, 0.125,   0.1875,  -0.28125, 0.09375, -0.375,
      0.0,    -0.625,  0.15625, -0.46875, 0.0,   -0.125,  0.03125, -0.09375, 0.0,     0.375,    -0.09375, 0.28125};
  expect_values(run(tf_op("nn.conv2d_transpose", xk, {{"output_shape", {1, 5, 6, 2}}, {"strides", 2}, {"padding", "VALID"}}), {x, k}),
                {1, 5, 6, 2}, valid);
  // Keras 3's ConvTranspose computes it so (its TensorFlow backend calls tf.nn.conv_transpose).
  expect_values(run(keras_op("nn.ConvTranspose", {{"strides", 2}}, xk), {x, k}), {1, 5, 6, 2}, valid);
  // tf.nn.conv2d_transpose(x, k, [1, 3, 5, 2], 2, "SAME"); Keras 3 with output_padding (0, 1) too.
  const std::vector<float> same = {0.3125, -0.46875, 0.15625, -0.625,   -0.125, 0.1875,  -0.0625, 0.25,     0.125,  -0.1875,
                                   -0.625, 0.78125,  -0.625,  0.78125,  -0.125, -0.21875, -0.03125, -0.125,  0.375,  0.15625,
                                   -0.3125, 0.46875, -0.15625, 0.625,   -0.0625, 0.09375, -0.03125, 0.125,   0.1875, -0.28125};
  expect_values(run(tf_op("nn.conv2d_transpose", xk, {{"output_shape", {1, 3, 5, 2}}, {"strides", 2}}), {x, k}), {1, 3, 5, 2}, same);
  expect_values(run(keras_op("nn.ConvTranspose", {{"strides", 2}, {"padding", "same"}, {"output_padding", {0, 1}}}, xk), {x, k}),
                {1, 3, 5, 2}, same);
  // tf.nn.conv1d_transpose(x (1, 3, 2), k (2, 1, 2), [1, 7, 1], 3, "SAME").
  expect_values(run(tf_op("nn.conv1d_transpose", xk, {{"output_shape", {1, 7, 1}}, {"strides", 3}}), {ramp_x({1, 3, 2}), ramp_k({2, 1, 2})}),
                {1, 7, 1}, {0.6875, 0.59375, 0.0, 0.40625, 0.5, 0.0, -0.21875});
  // keras.ops.adaptive_max_pool / adaptive_average_pool(x (1, 5, 4, 2), (3, 3)), (1, 3, 2) -> (5,).
  const Tensor x4 = ramp_x({1, 5, 4, 2});
  expect_values(run(keras_op("nn.AdaptiveMaxPool", {{"output_size", {3, 3}}, {"data_format", "channels_last"}}, x0), {x4}), {1, 3, 3, 2},
                {-0.125, 0.625, 0.25, 0.625, 0.625, 0.125, 0.125, 0.625, 0.5, 0.0, 0.625, 0.375, 0.25, 0.625, 0.625, 0.125, 0.625, 0.5});
  expect_values(run(keras_op("nn.AdaptiveAveragePool", {{"output_size", {3, 3}}}, x0), {x4}), {1, 3, 3, 2},
                {-0.375, 0.15625, 0.0, -0.15625, 0.375, -0.125, -0.1875, 0.0, 0.1875, -0.3125, 0.1041666641831398, 0.0625, 0.0,
                 -0.15625, 0.375, -0.125, 0.0625, 0.25});
  expect_values(run(keras_op("nn.AdaptiveAveragePool", {{"output_size", {5}}}, x0), {ramp_x({1, 3, 2})}), {1, 5, 2},
                {-0.625, 0.25, -0.4375, 0.4375, -0.25, 0.625, -0.0625, 0.125, 0.125, -0.375});
}

TEST(ConvPoolOps, Errors) {
  std::mt19937 g(9);
  const Tensor x = distinct(g, {1, 5, 5, 3}), k = distinct(g, {3, 3, 3, 4});
  auto error = [](const LayerPtr& op, const std::vector<Tensor>& in) { return error_of([&] { op->call(in, CallContext{}); }); };
  auto has = [](const std::string& e, const std::string& what) { return e.find(what) != std::string::npos; };
  std::string e = error(keras_op("nn.Conv", {{"padding", "causal"}}, xk), {x, k});
  EXPECT_TRUE(has(e, "nn.Conv") && has(e, "'padding'")) << e;
  e = error(keras_op("nn.Conv", Json::object(), xk), {x, distinct(g, {3, 3, 2, 4})});  // 2 input channels, not 3
  EXPECT_TRUE(has(e, "nn.Conv") && has(e, "'kernel'")) << e;
  e = error(keras_op("nn.Conv", Json::object(), xk), {x, distinct(g, {3, 3, 4})});  // rank
  EXPECT_TRUE(has(e, "nn.Conv") && has(e, "rank")) << e;
  e = error(keras_op("nn.Conv", {{"strides", {1, 2, 3}}}, xk), {x, k});
  EXPECT_TRUE(has(e, "nn.Conv") && has(e, "'strides'")) << e;
  e = error(keras_op("nn.Conv", {{"data_format", "NHWC"}}, xk), {x, k});  // TensorFlow's spelling in a Keras 3 op
  EXPECT_TRUE(has(e, "nn.Conv") && has(e, "'data_format'")) << e;
  e = error(keras_op("nn.Conv", Json::object(), xk), {x, distinct(g, {6, 6, 3, 4})});  // an empty output
  EXPECT_TRUE(has(e, "nn.Conv") && has(e, "empty")) << e;
  e = error(keras_op("nn.SeparableConv", Json::object(), Json::array({in(0), in(1), in(2)})),
            {x, distinct(g, {2, 2, 3, 2}), distinct(g, {1, 1, 5, 4})});
  EXPECT_TRUE(has(e, "nn.SeparableConv") && has(e, "'pointwise_kernel'")) << e;
  e = error(keras_op("nn.ConvTranspose", {{"strides", 2}, {"output_padding", 2}}, xk), {x, distinct(g, {3, 3, 4, 3})});
  EXPECT_TRUE(has(e, "nn.ConvTranspose") && has(e, "'output_padding'")) << e;
  e = error(tf_op("nn.conv2d", xk, {{"strides", 1}, {"padding", {{0, 0}, {1, 1}, {1, 1}, {0, 0}}}}), {x, k});
  EXPECT_TRUE(has(e, "nn.conv2d") && has(e, "'padding'")) << e;
  e = error(tf_op("nn.conv2d", xk, {{"strides", {2, 1, 1, 1}}, {"padding", "SAME"}}), {x, k});  // a batch stride
  EXPECT_TRUE(has(e, "nn.conv2d") && has(e, "'strides'")) << e;
  e = error(tf_op("nn.conv2d_transpose", xk, {{"output_shape", {1, 7, 7, 4}}, {"strides", 2}}), {x, distinct(g, {3, 3, 4, 3})});
  EXPECT_TRUE(has(e, "nn.conv2d_transpose") && has(e, "'output_shape'")) << e;  // 7 does not convolve back to 5
  e = error(tf_op("nn.conv2d_transpose", xk, {{"output_shape", in(2)}, {"strides", 2}}), {x, distinct(g, {3, 3, 4, 3}), x});
  EXPECT_TRUE(has(e, "nn.conv2d_transpose") && has(e, "'output_shape'")) << e;  // a tensor
  e = error(keras_op("nn.MaxPool", {{"pool_size", {2, 2, 2}}}, x0), {x});
  EXPECT_TRUE(has(e, "nn.MaxPool") && has(e, "'pool_size'")) << e;
  e = error(keras_op("nn.AveragePool", {{"pool_size", 6}}, x0), {x});
  EXPECT_TRUE(has(e, "nn.AveragePool") && has(e, "empty")) << e;
  e = error(tf_op("nn.pool", x0, {{"window_shape", {2, 2}}, {"pooling_type", "AVG"}, {"dilations", 2}}), {x});
  EXPECT_TRUE(has(e, "nn.pool") && has(e, "'dilation_rate'")) << e;
  e = error(tf_op("nn.pool", x0, {{"window_shape", {2, 2}}, {"pooling_type", "SUM"}}), {x});
  EXPECT_TRUE(has(e, "nn.pool") && has(e, "'pooling_type'")) << e;
  e = error(keras_op("nn.AdaptiveMaxPool", {{"output_size", {2, 2, 2}}}, x0), {x});
  EXPECT_TRUE(has(e, "nn.AdaptiveMaxPool") && has(e, "'output_size'")) << e;
  e = error(keras_op("nn.Unfold", {{"kernel_size", 2}}, x0), {distinct(g, {2, 3, 4})});
  EXPECT_TRUE(has(e, "nn.Unfold") && has(e, "rank 4")) << e;
  e = error(keras_op("nn.Unfold", {{"kernel_size", 2}, {"padding", -1}}, x0), {x});
  EXPECT_TRUE(has(e, "nn.Unfold") && has(e, "'padding'")) << e;
  e = error(keras_op("nn.Fold", {{"output_size", {5, 4}}, {"kernel_size", 2}}, x0), {distinct(g, {1, 12, 10})});
  EXPECT_TRUE(has(e, "nn.Fold") && has(e, "blocks")) << e;
}

}  // namespace
}  // namespace kerascpp
