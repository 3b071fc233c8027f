// Padding and correlation op nodes (array_ops_padding.cpp): keras.ops.pad / tf.pad in modes constant,
// reflect and symmetric, keras.ops.corrcoef and keras.ops.correlate. Each op's backward against central
// finite differences through the node, shapes inferred as computed, values against Keras's (written
// below as Keras 3.15's TensorFlow backend printed them for these inputs: corrcoef and correlate take
// whole tensors, so no model fixture holds them), and the errors for what Keras / kerascpp refuse.
#include <gtest/gtest.h>

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

const Json kX0 = Json::array({in(0)});
const Json kX01 = Json::array({in(0), in(1)});

Tensor run(const LayerPtr& op, const std::vector<Tensor>& in) {
  std::vector<Shape> shapes;
  for (const Tensor& t : in) shapes.push_back(t.shape());
  const Tensor y = op->call(in, CallContext{})[0];
  EXPECT_EQ(op->compute_output_shape(shapes)[0], y.shape()) << op->name();
  return y;
}
void expect_values(const Tensor& t, const Shape& shape, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(static_cast<size_t>(t.size()), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.data<float>()[i], want[i], tol * std::max(1.f, std::abs(want[i]))) << "element " << i;
}
Tensor vec(const std::vector<float>& v) { return Tensor::from_vector({static_cast<int64_t>(v.size())}, v); }
LayerPtr keras_pad(Json pads, const char* mode, Json kwargs = {{"constant_values", nullptr}}) {
  return keras_op("numpy.Pad", {{"pad_width", std::move(pads)}, {"mode", mode}}, kX0, std::move(kwargs));
}
LayerPtr tf_pad(Json pads, const char* mode, Json constant = 0) {
  return tf_op("compat.v1.pad", kX0, {{"paddings", std::move(pads)}, {"mode", mode}, {"name", nullptr}, {"constant_values", constant}});
}
auto has = [](const std::string& e, const char* a, const char* b) {
  EXPECT_NE(e.find(a), std::string::npos) << a << " | " << b << " | " << e;
  EXPECT_NE(e.find(b), std::string::npos) << e;
};

TEST(PaddingOps, MirrorValuesAsKeras) {
  // keras.ops.pad(np.arange(6.).reshape(2, 3), ((1, 1), (2, 2)), mode=...) in Keras 3 (TensorFlow backend).
  const Tensor x = Tensor::from_vector({2, 3}, {0, 1, 2, 3, 4, 5});
  expect_values(run(keras_pad({{1, 1}, {2, 2}}, "reflect"), {x}), {4, 7},
                {5, 4, 3, 4, 5, 4, 3, 2, 1, 0, 1, 2, 1, 0, 5, 4, 3, 4, 5, 4, 3, 2, 1, 0, 1, 2, 1, 0});
  expect_values(run(keras_pad({{1, 1}, {2, 2}}, "symmetric"), {x}), {4, 7},
                {1, 0, 0, 1, 2, 2, 1, 1, 0, 0, 1, 2, 2, 1, 4, 3, 3, 4, 5, 5, 4, 4, 3, 3, 4, 5, 5, 4});
  // tf.pad(x, [[1, 1], [3, 3]], "SYMMETRIC") (the widest symmetric pad), "Reflect" with constant_values
  // (ignored by tf.pad when mirroring): TensorFlow's values.
  expect_values(run(tf_pad({{1, 1}, {3, 3}}, "SYMMETRIC"), {x}), {4, 9},
                {2, 1, 0, 0, 1, 2, 2, 1, 0, 2, 1, 0, 0, 1, 2, 2, 1, 0, 5, 4, 3, 3, 4, 5, 5, 4, 3, 5, 4, 3, 3, 4, 5, 5, 4, 3});
  expect_values(run(tf_pad({{1, 1}, {1, 1}}, "Reflect", 5.0), {x}), {4, 5},
                {4, 3, 4, 5, 4, 1, 0, 1, 2, 1, 4, 3, 4, 5, 4, 1, 0, 1, 2, 1});
  // Constant: the value as given; a rank-0 x with no pads stays itself.
  expect_values(run(keras_pad({{0, 1}, {1, 0}}, "constant", {{"constant_values", 1.5}}), {x}), {3, 4},
                {1.5f, 0, 1, 2, 1.5f, 3, 4, 5, 1.5f, 1.5f, 1.5f, 1.5f});
  expect_values(run(keras_pad(Json::array(), "reflect"), {Tensor::from_vector({}, {2.5f})}), {}, {2.5f});
}

TEST(PaddingOps, Gradients) {
  std::mt19937 g(5);
  const Tensor x = distinct(g, {2, 3, 4});
  for (const char* mode : {"reflect", "symmetric", "constant"}) {
    expect_gradients(keras_pad({{0, 0}, {1, 2}, {2, 1}}, mode), {x});
    expect_gradients(keras_pad({{1, 1}, {0, 0}, {3, 0}}, mode), {x});
  }
  // The widest pads: each source mirrored into several outputs, its gradient their sum.
  expect_gradients(keras_pad({{1, 1}, {2, 2}, {3, 3}}, "reflect"), {x});
  expect_gradients(keras_pad({{2, 2}, {3, 3}, {4, 4}}, "symmetric"), {x});
  expect_gradients(tf_pad({{0, 0}, {2, 1}, {1, 3}}, "SYMMETRIC"), {x});
  expect_gradients(tf_pad({{1, 0}, {2, 2}, {0, 3}}, "REFLECT", 2.0), {x});
  expect_gradients(tf_pad({{1, 0}, {2, 2}, {0, 3}}, "CONSTANT", 2.0), {x});
  // constant_values as a tensor: its gradient is the sum of dy over the padded frame.
  expect_gradients(keras_op("numpy.Pad", {{"pad_width", {{0, 1}, {1, 0}, {2, 1}}}, {"mode", "constant"}}, kX0, {{"constant_values", in(1)}}),
                   {x, Tensor::from_vector({}, {0.7f})});
}

TEST(PaddingOps, ShapesWithUnknownDims) {
  const LayerPtr op = keras_pad({{0, 0}, {1, 2}, {2, 2}}, "reflect");
  EXPECT_EQ(op->compute_output_shape({{-1, 4, 3}})[0], (Shape{-1, 7, 7}));
  // Too wide for a known axis: refused when the graph is built, naming the op and pad_width.
  has(error_of([&] { op->compute_output_shape({{-1, 2, 3}}); }), "numpy.Pad", "argument 'pad_width'");
  EXPECT_EQ(keras_pad({{0, 0}, {2, 3}}, "symmetric")->compute_output_shape({{-1, 3}})[0], (Shape{-1, 8}));
}

TEST(PaddingOps, Errors) {
  const Tensor x = Tensor::zeros({2, 3});
  auto err = [&](const LayerPtr& op, std::vector<Tensor> in = {}) {
    return error_of([&] { op->call(in.empty() ? std::vector<Tensor>{x} : in, CallContext{}); });
  };
  // numpy's other modes: tf.pad (so Keras's TensorFlow backend) runs none of them.
  for (const char* mode : {"edge", "wrap", "maximum", "mean", "median", "minimum", "linear_ramp", "empty", "circular"})
    has(err(keras_pad({{1, 1}, {1, 1}}, mode)), "numpy.Pad", "argument 'mode'");
  has(err(tf_pad({{1, 1}, {1, 1}}, "EDGE")), "compat.v1.pad", "argument 'mode'");
  has(err(keras_pad({{1, 1}, {3, 0}}, "reflect")), "numpy.Pad", "argument 'pad_width'");   // 3 not < 3
  has(err(keras_pad({{1, 1}, {0, 4}}, "symmetric")), "numpy.Pad", "argument 'pad_width'");  // 4 > 3
  has(err(tf_pad({{2, 0}, {0, 0}}, "REFLECT")), "compat.v1.pad", "argument 'pad_width'");
  has(err(keras_pad({{1, 1}}, "constant")), "numpy.Pad", "argument 'pad_width'");            // one pair, rank 2
  has(err(keras_pad({{1, 1}, {-1, 0}}, "constant")), "numpy.Pad", "argument 'pad_width'");
  has(err(keras_pad({{1, 1}, {1}}, "constant")), "numpy.Pad", "argument 'pad_width'");
  // Keras 3 refuses constant_values unless mode == "constant" (tf.pad ignores them).
  has(err(keras_pad({{1, 1}, {1, 1}}, "reflect", {{"constant_values", 1.0}})), "numpy.Pad", "argument 'constant_values'");
  has(err(keras_pad({{1, 1}, {1, 1}}, "CONSTANT", {{"constant_values", 1.0}})), "numpy.Pad", "argument 'constant_values'");
  EXPECT_EQ(err(keras_pad({{1, 1}, {1, 1}}, "CONSTANT")), "");
  has(err(keras_op("numpy.Pad", {{"pad_width", {{1, 1}, {1, 1}}}, {"mode", "constant"}}, kX0, {{"constant_values", in(1)}}),
          {x, Tensor::zeros({2})}),
      "numpy.Pad", "argument 'constant_values'");
}

// keras.ops.corrcoef(x) in Keras 3 (TensorFlow backend) for this x: its printed float32 values.
const std::vector<float> kCorrX = {0.3f, -1.2f, 0.8f, 0.5f, -0.4f, 1.1f, 0.2f, -0.7f, 0.9f, 0.6f, -0.5f, 0.4f, 0.35f, -1.0f, 0.75f};

TEST(CorrelationOps, CorrcoefAsKeras) {
  const Tensor x = Tensor::from_vector({3, 5}, kCorrX);
  const LayerPtr op = keras_op("numpy.Corrcoef", Json::object(), kX0);
  expect_values(run(op, {x}), {3, 3},
                {1.0f, -0.11366574466228485f, -0.49464768171310425f, -0.11366574466228485f, 1.0f, -0.5651970505714417f,
                 -0.49464768171310425f, -0.5651970505714417f, 0.9999998807907104f});
  EXPECT_EQ(op->compute_output_shape({{-1, 5}})[0], (Shape{-1, -1}));
  // Rank 0: NaN, as Keras.
  EXPECT_TRUE(std::isnan(run(op, {Tensor::from_vector({}, {2.f})}).data<float>()[0]));
  std::mt19937 g(7);
  expect_gradients(op, {distinct(g, {3, 6})});
  expect_gradients(op, {distinct(g, {2, 4})});
}

TEST(CorrelationOps, CorrelateAsKeras) {
  // keras.ops.correlate(p, q, mode) in Keras 3 (TensorFlow backend) for these vectors: its values.
  const Tensor a = vec({0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f}), b = vec({1.0f, 0.5f, -2.0f}), c = vec({0.3f, -0.6f, 1.2f, 0.9f});
  struct Case {
    const char* mode;
    Tensor p, q;
    std::vector<float> want;
  };
  const std::vector<Case> cases = {
      {"valid", a, b, {-4.0f, -0.5f, 3.625f, -3.125f}},
      {"valid", a, c, {3.375f, -1.875f, 0.8999999761581421f}},
      {"valid", c, b, {-2.4000000953674316f, -1.7999999523162842f}},
      {"same", a, b, {2.25f, -4.0f, -0.5f, 3.625f, -3.125f, 0.0f}},
      {"same", b, a, {0.0f, -3.125f, 3.625f, -0.5f, -4.0f, 2.25f}},
      {"same", a, c, {-0.2999999523162842f, 0.2999999523162842f, 3.375f, -1.875f, 0.8999999761581421f, 2.325000047683716f}},
      {"same", c, b, {1.350000023841858f, -2.4000000953674316f, -1.7999999523162842f, 1.6500000953674316f}},
      {"full", a, b, {-1.0f, 2.25f, -4.0f, -0.5f, 3.625f, -3.125f, 0.0f, 1.5f}},
      {"full", b, a, {1.5f, 0.0f, -3.125f, 3.625f, -0.5f, -4.0f, 2.25f, -1.0f}},
      {"full", a, c, {0.44999998807907104f, -0.2999999523162842f, 0.2999999523162842f, 3.375f, -1.875f, 0.8999999761581421f,
                      2.325000047683716f, -1.125f, 0.45000001788139343f}},
      {"full", c, b, {-0.6000000238418579f, 1.350000023841858f, -2.4000000953674316f, -1.7999999523162842f, 1.6500000953674316f,
                      0.8999999761581421f}},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.mode);
    const LayerPtr op = keras_op("numpy.Correlate", {{"mode", k.mode}}, kX01);
    expect_values(run(op, {k.p, k.q}), {static_cast<int64_t>(k.want.size())}, k.want);
    expect_gradients(op, {k.p, k.q});
  }
  // The default mode is valid; unknown lengths stay unknown.
  const LayerPtr valid = keras_op("numpy.Correlate", Json::object(), kX01);
  expect_values(run(valid, {a, b}), {4}, cases[0].want);
  EXPECT_EQ(valid->compute_output_shape({{-1}, {3}})[0], (Shape{-1}));
}

TEST(CorrelationOps, Errors) {
  const Tensor v = Tensor::zeros({4}), w = Tensor::zeros({6}), m = Tensor::zeros({2, 3});
  auto err = [](const LayerPtr& op, std::vector<Tensor> in) { return error_of([&] { op->call(in, CallContext{}); }); };
  const LayerPtr corrcoef = keras_op("numpy.Corrcoef", Json::object(), kX0);
  has(err(corrcoef, {v}), "numpy.Corrcoef", "argument 'x'");  // tf.matmul of a vector fails in Keras too
  has(err(corrcoef, {Tensor::zeros({1, 2, 3})}), "numpy.Corrcoef", "argument 'x'");
  has(err(keras_op("numpy.Correlate", {{"mode", "circular"}}, kX01), {v, w}), "numpy.Correlate", "argument 'mode'");
  has(err(keras_op("numpy.Correlate", {{"mode", "full"}}, kX01), {m, v}), "numpy.Correlate", "argument 'x1'");
  has(err(keras_op("numpy.Correlate", {{"mode", "same"}}, kX01), {v, m}), "numpy.Correlate", "argument 'x2'");
  // valid with x2 longer than x1: Keras's TensorFlow backend fails (conv1d output size negative).
  has(err(keras_op("numpy.Correlate", {{"mode", "valid"}}, kX01), {v, w}), "numpy.Correlate", "argument 'x2'");
}

}  // namespace
}  // namespace kerascpp
