// keras.ops.nn op nodes and tf.nn TFOpLambda functions (nn_ops*.cpp): each differentiable op's backward
// against central finite differences, shapes inferred as computed, a few values against what Keras 3.15
// (TensorFlow backend) prints, and the errors for arguments kerascpp does not run. Forward values in
// general are checked against Keras by the nn_* fixtures (scripts/fixtures/cases_ops_nn.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "../test_errors.h"
#include "kerascpp/autodiff.h"
#include "kerascpp/kerascpp.h"
#include "op_node_testing.h"

namespace kerascpp {
namespace {
using testing::error_of;

using namespace op_node_testing;  // NOLINT: the helpers of every op node test

const Json x0 = Json::array({in(0)}), xy = Json::array({in(0), in(1)});

Tensor run(const LayerPtr& op, const std::vector<Tensor>& inputs) {
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  const Tensor y = op->call(inputs, CallContext{})[0];
  EXPECT_EQ(op->compute_output_shape(shapes)[0], y.shape()) << op->class_name();
  return y;
}
void expect_values(const Tensor& got, const std::vector<float>& want, float tol = 1e-6f) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.data<float>()[i], want[i], tol * std::max(1.f, std::fabs(want[i]))) << i;
}
// The error's message names the op node and the argument.
void expect_error(const std::function<void()>& f, const std::string& arg) {
  const std::string e = error_of(f);
  EXPECT_NE(e.find("Operation 'op'"), std::string::npos) << e;
  EXPECT_NE(e.find("'" + arg + "'"), std::string::npos) << e;
}
void expect_tf_error(const std::function<void()>& f, const std::string& fn, const std::string& arg) {
  const std::string e = error_of(f);
  EXPECT_NE(e.find("tf." + fn), std::string::npos) << e;
  EXPECT_NE(e.find("'" + arg + "'"), std::string::npos) << e;
}

// -2.37, -2.17, ..., 2.23 shuffled: none within 0.03 of the kinks at +-1, +-0.5, 0.3, 1.1, 1.3.
Tensor spread(std::mt19937& g, const Shape& shape) {
  std::vector<float> v(shape_size(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = -2.37f + 0.2f * static_cast<float>(i % 24);
  std::shuffle(v.begin(), v.end(), g);
  return Tensor::from_vector(shape, v);
}

TEST(NnOps, ActivationGradients) {
  std::mt19937 g(5);
  const Tensor x = spread(g, {2, 3, 4});
  for (const char* cls : {"nn.SparseSigmoid", "nn.SoftShrink", "nn.SparsePlus", "nn.Squareplus", "nn.Celu", "nn.Glu",
                          "nn.TanhShrink", "nn.HardTanh", "nn.HardShrink"})
    expect_gradients(keras_op(cls, Json::object(), x0), {x});
  expect_gradients(keras_op("nn.SoftShrink", {{"threshold", 1.1}}, x0), {x});
  expect_gradients(keras_op("nn.Squareplus", {{"b", 0.5}}, x0), {x});
  expect_gradients(keras_op("nn.Celu", {{"alpha", 0.4}}, x0), {x});
  expect_gradients(keras_op("nn.Glu", {{"axis", 0}}, x0), {x});
  expect_gradients(keras_op("nn.HardShrink", {{"threshold", 1.3}}, x0), {x});
  expect_gradients(keras_op("nn.Threshold", {{"threshold", 0.3}, {"default_value", -2.0}}, x0), {x});
  // Keras's sparsemax jumps where the support changes (z_1 - z_2 = 1, ...): spacings of 0.074 and
  // 0.026 put no sum of gaps at 1.
  expect_gradients(keras_op("nn.Sparsemax", Json::object(), x0), {affine(x, 0.37f, 0.f)});
  expect_gradients(keras_op("nn.Sparsemax", {{"axis", 1}}, x0), {affine(x, 0.37f, 0.f)});
  expect_gradients(keras_op("nn.Sparsemax", Json::object(), x0), {affine(x, 0.13f, 0.f)});  // a wide support
  expect_gradients(tf_op("nn.crelu", x0, {{"axis", 1}}), {x});
  expect_gradients(tf_op("compat.v1.nn.crelu", x0, Json::object()), {x});
}

TEST(NnOps, ActivationValues) {
  // keras.ops.sparsemax([[1, 0.5, -1], [0.3, 0.2, 0.1]]) on Keras 3.15: Keras's tau sums the support's
  // cumulative sums (its formula, not the paper's); kerascpp computes what Keras does.
  const Tensor y = run(keras_op("nn.Sparsemax", Json::object(), x0), {Tensor::from_vector({2, 3}, {1.f, 0.5f, -1.f, 0.3f, 0.2f, 0.1f})});
  expect_values(y, {0.25f, 0.f, 0.f, 0.16666664f, 0.06666663f, 0.f});
  const Tensor h = run(keras_op("nn.Glu", {{"axis", -1}}, x0), {Tensor::from_vector({1, 2}, {3.f, 0.f})});
  expect_values(h, {1.5f});
}

TEST(NnOps, OneHot) {
  // keras.ops.one_hot([0, 2, -1, 3], 3): out of range gives a row of zeros.
  const Tensor ids = Tensor::from_vector({4}, {0.f, 2.f, -1.f, 3.f});
  expect_values(run(keras_op("nn.OneHot", {{"num_classes", 3}}, x0), {ids}), {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0});
  const Tensor t = run(keras_op("nn.OneHot", {{"num_classes", 3}, {"axis", 0}}, x0), {ids});
  EXPECT_EQ(t.shape(), (Shape{3, 4}));
  expect_values(t, {1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0});
  expect_values(run(tf_op("one_hot", x0, {{"depth", 3}, {"on_value", 2.0}, {"off_value", -1.0}}), {ids}),
                {2, -1, -1, -1, -1, 2, -1, -1, -1, -1, -1, -1});
  const Tensor m = run(keras_op("nn.MultiHot", {{"num_classes", 4}}, x0), {Tensor::from_vector({2, 3}, {0, 2, 2, 3, 3, 9})});
  expect_values(m, {1, 0, 1, 0, 0, 0, 0, 1});
}

TEST(NnOps, NormalizationGradients) {
  std::mt19937 g(7);
  const Tensor x = distinct(g, {2, 3, 4}), c4 = distinct(g, {4}), v4 = distinct(g, {4}, true), c3 = distinct(g, {3});
  expect_gradients_of_each(keras_op("nn.Moments", {{"axes", {1, 2}}, {"keepdims", true}}, x0), {x});
  expect_gradients_of_each(keras_op("nn.Moments", {{"axes", {-1}}}, x0), {x});
  expect_gradients_of_each(keras_op("nn.Moments", {{"axes", {1}}, {"synchronized", true}}, x0), {affine(x, 1.f, 2.f)});
  const Json five = Json::array({in(0), in(1), in(2), in(3), in(4)});
  expect_gradients(keras_op("nn.BatchNorm", {{"axis", -1}, {"epsilon", 0.01}}, five), {x, c4, v4, c4, v4});
  expect_gradients(keras_op("nn.BatchNorm", {{"axis", 1}}, Json::array({in(0), in(1), in(2)})),
                   {x, c3, affine(c3, 0.f, 1.5f)});
  // Statistics that broadcast (axis -1, of another shape): composed of elementwise ops.
  expect_gradients(keras_op("nn.BatchNorm", {{"axis", -1}}, Json::array({in(0), in(1), in(2), nullptr, in(3)})),
                   {x, distinct(g, {2, 1, 4}), distinct(g, {2, 1, 4}, true), v4});
  expect_gradients(keras_op("nn.RMSNorm", Json::object(), x0), {x});
  expect_gradients(keras_op("nn.RMSNorm", {{"axis", {1, 2}}, {"epsilon", 0.1}}, x0, {{"scale", in(1)}}), {x, c4});
  expect_gradients(keras_op("nn.LayerNorm", Json::object(), Json::array({in(0), in(1), in(2)})), {x, v4, c4});
  expect_gradients(keras_op("nn.LayerNorm", {{"axis", 1}}, Json::array({in(0), nullptr, in(1)})), {x, c3});
  expect_gradients(keras_op("nn.LayerNorm", {{"axis", {1, 2}}}, Json::array({in(0), in(1)})), {x, distinct(g, {3, 4})});
  expect_gradients(keras_op("nn.LayerNorm", {{"rms_scaling", true}}, Json::array({in(0), in(1)})), {x, v4});
  // A gamma per sample (it broadcasts, but is not the normalised axes' shape): applied after the op.
  expect_gradients(keras_op("nn.LayerNorm", Json::object(), Json::array({in(0), in(1)})), {x, distinct(g, {2, 1, 4})});
  expect_gradients(keras_op("nn.PSNR", {{"max_val", 2.0}}, xy), {x, distinct(g, {2, 3, 4})});
}

TEST(NnOps, NormalizationValues) {
  // keras.ops.psnr([[0.1, 0.5], [0.9, 0.3]], [[0.2, 0.4], [0.7, 0.3]], max_val) for 1 and 255.
  const Tensor a = Tensor::from_vector({2, 2}, {0.1f, 0.5f, 0.9f, 0.3f}), b = Tensor::from_vector({2, 2}, {0.2f, 0.4f, 0.7f, 0.3f});
  expect_values(run(keras_op("nn.PSNR", {{"max_val", 1.0}}, xy), {a, b}), {18.239086151123047f}, 1e-6f);
  expect_values(run(keras_op("nn.PSNR", {{"max_val", 255.0}}, xy), {a, b}), {66.36988830566406f}, 1e-6f);
  const std::vector<Tensor> m = keras_op("nn.Moments", {{"axes", {0}}}, x0)->call({a}, CallContext{});
  expect_values(m[0], {0.5f, 0.4f});
  expect_values(m[1], {0.16f, 0.01f});
}

TEST(NnOps, LossGradients) {
  std::mt19937 g(9);
  const Tensor x = distinct(g, {2, 3, 4});
  const Tensor p = affine(distinct(g, {2, 3, 4}, true), 0.7f, 0.05f);  // in (0.19, 0.9): no clipping
  const Tensor t = affine(distinct(g, {2, 3, 4}, true), 0.5f, 0.f);
  expect_gradients(keras_op("nn.BinaryCrossentropy", Json::object(), xy), {t, p});
  expect_gradients(keras_op("nn.BinaryCrossentropy", {{"from_logits", true}}, xy), {t, x});
  expect_gradients(keras_op("nn.CategoricalCrossentropy", Json::object(), xy), {t, p});
  expect_gradients(keras_op("nn.CategoricalCrossentropy", {{"from_logits", true}, {"axis", 1}}, xy), {t, x});
  const Json labels = {{0, 3, 1}, {2, 2, 0}};  // constants: class ids have no gradient
  expect_gradients(keras_op("nn.SparseCategoricalCrossentropy", {{"from_logits", true}}, {labels, in(0)}), {x});
  expect_gradients(keras_op("nn.SparseCategoricalCrossentropy", Json::object(), {labels, in(0)}), {p});
  expect_gradients(tf_op("compat.v1.nn.sigmoid_cross_entropy_with_logits", x0, {{"logits", in(1)}}), {t, x});
  expect_gradients(tf_op("compat.v1.nn.softmax_cross_entropy_with_logits_v2", x0, {{"logits", in(1)}, {"axis", 1}}), {t, x});
  expect_gradients(tf_op("nn.sparse_softmax_cross_entropy_with_logits", {labels}, {{"logits", in(0)}}), {x});
}

TEST(NnOps, LossValues) {
  // keras.ops.binary_crossentropy([1, 0, 0.3], [0, 0, 1]): probabilities clipped to [1e-7, 1 - 1e-7].
  const Tensor t = Tensor::from_vector({3}, {1.f, 0.f, 0.3f}), o = Tensor::from_vector({3}, {0.f, 0.f, 1.f});
  expect_values(run(keras_op("nn.BinaryCrossentropy", Json::object(), xy), {t, o}), {16.118095f, 1.1920929e-07f, 11.159669f}, 1e-6f);
}

TEST(NnOps, AttentionGradients) {
  std::mt19937 g(13);
  const Tensor q = distinct(g, {2, 3, 4, 2}), k = distinct(g, {2, 5, 2, 2}), v = distinct(g, {2, 5, 2, 3});
  const Tensor k4 = distinct(g, {2, 5, 4, 2}), bias = distinct(g, {4, 3, 5});
  const Json qkv = Json::array({in(0), in(1), in(2)});
  expect_gradients(keras_op("nn.DotProductAttention", Json::object(), qkv), {q, k4, k4});
  expect_gradients(keras_op("nn.DotProductAttention", {{"is_causal", true}}, qkv, {{"scale", 0.3}}), {q, k, v});
  const Json mask = {{{{1, 1, 0, 1, 0}}}};  // (1, 1, 1, 5)
  expect_gradients(keras_op("nn.DotProductAttention", {{"is_causal", true}}, qkv, {{"bias", in(3)}, {"mask", mask}}), {q, k, v, bias});
  // Causal with one query step per key step: the first step sees only the first value.
  const Tensor one = Tensor::from_vector({1, 2, 1, 1}, {1.f, 1.f}), val = Tensor::from_vector({1, 2, 1, 1}, {1.f, 3.f});
  expect_values(run(keras_op("nn.DotProductAttention", {{"is_causal", true}}, qkv), {one, one, val}), {1.f, 2.f});
}

TEST(NnOps, MovementGradients) {
  std::mt19937 g(17);
  const Tensor x = distinct(g, {2, 4, 2, 4}), s = distinct(g, {2, 4, 6, 4});
  for (const char* f : {"channels_last", "channels_first"}) {
    expect_gradients(keras_op("nn.DepthToSpace", {{"block_size", 2}, {"data_format", f}}, x0), {x});
    expect_gradients(keras_op("nn.SpaceToDepth", {{"block_size", 2}, {"data_format", f}}, x0), {s});
  }
  expect_gradients(tf_op("nn.depth_to_space", x0, {{"block_size", 2}}), {x});
  // space_to_depth undoes depth_to_space.
  const Tensor there = run(keras_op("nn.DepthToSpace", {{"block_size", 2}}, x0), {x});
  expect_values(run(keras_op("nn.SpaceToDepth", {{"block_size", 2}}, x0), {there}),
                std::vector<float>(x.data<float>(), x.data<float>() + x.size()));
  expect_gradients(tf_op("nn.bias_add", x0, {{"bias", in(1)}}), {x, distinct(g, {4})});
  expect_gradients(tf_op("nn.bias_add", x0, {{"bias", in(1)}, {"data_format", "NCHW"}}), {s, distinct(g, {4})});
  expect_gradients(tf_op("nn.local_response_normalization", x0, {{"depth_radius", 2}, {"alpha", 0.5}, {"beta", 0.75}}), {x});
}

TEST(NnOps, Errors) {
  const Tensor x = Tensor::zeros({2, 3, 4});
  const auto call = [&](const LayerPtr& op, std::vector<Tensor> in) { return [op, in] { op->call(in, CallContext{}); }; };
  expect_error(call(keras_op("nn.Glu", {{"axis", 5}}, x0), {x}), "axis");
  expect_error(call(keras_op("nn.Glu", {{"axis", 1}}, x0), {x}), "axis");  // 3 is odd
  expect_error(call(keras_op("nn.Sparsemax", {{"axis", -4}}, x0), {x}), "axis");
  expect_error(call(keras_op("nn.OneHot", {{"num_classes", 3}, {"sparse", true}}, x0), {x}), "sparse");
  expect_error(call(keras_op("nn.OneHot", {{"num_classes", 3}, {"axis", 4}}, x0), {x}), "axis");
  expect_error(call(keras_op("nn.Moments", {{"axes", {3}}}, x0), {x}), "axes");
  expect_error(call(keras_op("nn.LayerNorm", {{"axis", -4}}, x0), {x}), "axis");
  expect_error(call(keras_op("nn.PSNR", {{"max_val", 1.0}}, xy), {x, Tensor::zeros({2, 3})}), "x2");
  expect_error(call(keras_op("nn.CategoricalCrossentropy", Json::object(), xy), {x, Tensor::zeros({2, 3, 5})}), "target");
  expect_error(call(keras_op("nn.SparseCategoricalCrossentropy", {{"axis", 1}}, xy), {Tensor::zeros({2, 4}), x}), "axis");
  expect_error(call(keras_op("nn.SparseCategoricalCrossentropy", Json::object(), {{{0, 1, 4}, {0, 0, 0}}, in(0)}), {x}), "target");
  const Tensor q = Tensor::zeros({1, 2, 4, 2}), k3 = Tensor::zeros({1, 2, 3, 2});
  const Json qkv = Json::array({in(0), in(1), in(2)});
  expect_error(call(keras_op("nn.DotProductAttention", {{"flash_attention", true}}, qkv), {q, q, q}), "flash_attention");
  expect_error(call(keras_op("nn.DotProductAttention", {{"attn_logits_soft_cap", 20.0}}, qkv), {q, q, q}), "attn_logits_soft_cap");
  expect_error(call(keras_op("nn.DotProductAttention", Json::object(), qkv), {q, k3, k3}), "key");
  expect_error(call(keras_op("nn.DotProductAttention", Json::object(), qkv), {x, x, x}), "query");
  expect_error(call(keras_op("nn.DepthToSpace", {{"block_size", 2}}, x0), {x}), "x");
  expect_error(call(keras_op("nn.DepthToSpace", {{"block_size", 3}}, x0), {Tensor::zeros({1, 2, 2, 4})}), "block_size");
  expect_error(call(keras_op("nn.SpaceToDepth", {{"block_size", 2}, {"data_format", "channels_middle"}}, x0), {Tensor::zeros({1, 2, 2, 4})}),
               "data_format");
  expect_tf_error(call(tf_op("nn.bias_add", x0, {{"bias", in(1)}}), {x, Tensor::zeros({3})}), "nn.bias_add", "bias");
  expect_tf_error(call(tf_op("nn.sparse_softmax_cross_entropy_with_logits", {{{0, 7, 1}, {0, 0, 0}}}, {{"logits", in(0)}}), {x}),
                  "nn.sparse_softmax_cross_entropy_with_logits", "labels");
  // Shape inference rejects what the call would.
  EXPECT_NE(error_of([] { keras_op("nn.Glu", {{"axis", 1}}, x0)->compute_output_shape({{-1, 3, 4}}); }).find("'axis'"),
            std::string::npos);
}

}  // namespace
}  // namespace kerascpp
