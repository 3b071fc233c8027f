// Op nodes (keras.ops calls, tf_keras's TFOpLambda): each op's backward against central finite
// differences through the node as a graph builds it, and the errors for what kerascpp does not run.
// Their forward values are checked against Keras by the keras_ops_graph / tf_op_lambda fixtures.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "../test_errors.h"
#include "kerascpp/autodiff.h"
#include "kerascpp/kerascpp.h"
#include "layers/op_nodes/op_node.h"
#include "op_node_testing.h"

namespace kerascpp {
namespace {
using testing::error_of;

using namespace op_node_testing;  // NOLINT: the helpers of every op node test

TEST(OpNodes, KerasOpsGradients) {
  std::mt19937 g(3);
  const Tensor x = distinct(g, {2, 3, 4}), y = distinct(g, {2, 3, 4}), p = distinct(g, {2, 3, 4}, true);
  const Tensor m = distinct(g, {2, 4, 5}), k = distinct(g, {4, 2});
  const Json x0 = Json::array({in(0)}), xy = Json::array({in(0), in(1)});
  expect_gradients(keras_op("numpy.Mean", {{"axis", {1}}, {"keepdims", true}}, x0), {x});
  expect_gradients(keras_op("numpy.Sum", Json::object(), x0), {x});
  expect_gradients(keras_op("numpy.Max", {{"axis", -1}}, x0), {x});
  expect_gradients(keras_op("numpy.Min", {{"axis", {0, 2}}}, x0), {x});
  expect_gradients(keras_op("numpy.Var", {{"axis", 2}}, x0), {x});
  expect_gradients(keras_op("numpy.Std", {{"axis", 1}, {"keepdims", true}}, x0), {x});
  expect_gradients(keras_op("math.Logsumexp", {{"axis", -1}}, x0), {x});
  expect_gradients(keras_op("numpy.Reshape", {{"newshape", {-1, 6}}}, x0), {x});
  expect_gradients(keras_op("numpy.Transpose", {{"axes", {0, 2, 1}}}, x0), {x});
  expect_gradients(keras_op("numpy.ExpandDims", {{"axis", 1}}, x0), {x});
  expect_gradients(keras_op("numpy.Concatenate", {{"axis", -1}}, Json::array({xy})), {x, y});
  expect_gradients(keras_op("numpy.Stack", {{"axis", 1}}, Json::array({xy})), {x, y});
  expect_gradients(keras_op("numpy.Tile", {{"repeats", {1, 2, 1}}}, x0), {x});
  expect_gradients(keras_op("numpy.Repeat", {{"repeats", 2}, {"axis", 1}}, x0), {x});
  expect_gradients(keras_op("numpy.Take", {{"axis", 2}}, {in(0), {{0, 3}, {3, 3}}}), {x});  // a repeated index adds up
  expect_gradients(keras_op("numpy.Matmul", Json::object(), xy), {x, m});
  expect_gradients(keras_op("numpy.Matmul", Json::object(), xy), {x, k});
  expect_gradients(keras_op("numpy.Where", Json::object(), {Json::array({1, 0, 0, 1}), in(0), in(1)}), {x, y});
  expect_gradients(keras_op("numpy.Clip", {{"x_min", -0.5}, {"x_max", 0.7}}, x0), {x});
  expect_gradients(keras_op("numpy.Pad", {{"pad_width", {{0, 0}, {1, 2}, {0, 1}}}}, x0), {x});
  const Json key = {{{"class_name", "__slice__"}, {"config", {{"start", nullptr}, {"stop", nullptr}, {"step", -2}}}},
                    nullptr, {{"class_name", "__ellipsis__"}, {"config", Json::object()}}, 1};
  expect_gradients(keras_op("numpy.GetItem", Json::object(), {in(0), key}), {x});
  expect_gradients(keras_op("numpy.Power", Json::object(), xy), {p, x});
  for (const char* cls : {"numpy.Sin", "numpy.Cos", "numpy.Expm1", "math.Erf", "nn.LogSigmoid", "numpy.Negative",
                          "nn.Softmax", "nn.LogSoftmax", "nn.Normalize", "nn.Gelu", "nn.Silu", "numpy.Tanh"})
    expect_gradients(keras_op(cls, Json::object(), x0), {x});
  for (const char* cls : {"numpy.Log1p", "numpy.Reciprocal", "math.Rsqrt", "numpy.Sqrt", "numpy.Log"})
    expect_gradients(keras_op(cls, Json::object(), x0), {p});
  for (const char* cls : {"numpy.Tan", "numpy.Arcsin", "numpy.Arccos", "numpy.Arctan", "numpy.Sinh", "numpy.Cosh",
                          "numpy.Arcsinh", "numpy.Arctanh", "numpy.Exp2", "numpy.Cbrt", "numpy.Deg2rad",
                          "numpy.Rad2deg"})  // 0.8 x: in (-1, 1), the domain of arcsin, arccos, arctanh
    expect_gradients(keras_op(cls, Json::object(), x0), {affine(x, 0.8f, 0.f)});
  for (const char* cls : {"numpy.Log2", "numpy.Log10"}) expect_gradients(keras_op(cls, Json::object(), x0), {p});
  expect_gradients(keras_op("numpy.Arccosh", Json::object(), x0),
                   {affine(p, 1.f, 1.f)});  // above 1
  for (const char* cls : {"numpy.Arctan2", "numpy.Hypot", "numpy.Logaddexp"})
    expect_gradients(keras_op(cls, Json::object(), xy), {x, y});
  expect_gradients(tf_op("math.atan2", {in(0)}, {{"x", in(1)}}), {x, y});
  expect_gradients(keras_op("numpy.Moveaxis", {{"source", {0, 2}}, {"destination", {1, 0}}}, x0), {x});
  expect_gradients(keras_op("numpy.Swapaxes", {{"axis1", 0}, {"axis2", -1}}, x0), {x});
  expect_gradients(keras_op("numpy.Flip", {{"axis", {1, 2}}}, x0), {x});
  expect_gradients(keras_op("numpy.Roll", {{"shift", {-1, 5}}, {"axis", {0, 2}}}, x0), {x});
  expect_gradients(keras_op("numpy.Roll", {{"shift", 7}}, x0), {x});
  expect_gradients(keras_op("numpy.Tril", {{"k", -1}}, x0), {x});
  expect_gradients(keras_op("numpy.Triu", Json::object(), x0), {x});
  expect_gradients(tf_op("roll", {in(0)}, {{"shift", 2}, {"axis", 1}}), {x});
  expect_gradients(keras_op("nn.Elu", {{"alpha", 0.5}}, x0), {x});
  expect_gradients(make_layer("keras.src.activations.activations.ReLU",
                              {{"name", "relu"}, {"negative_slope", 0.1}, {"max_value", 0.8}, {"threshold", 0.05},
                               {"call", {{"args", x0}}}}),
                   {x});
  expect_gradients(keras_op("numpy.Mod", Json::object(), xy), {x, p});
  // A piecewise constant function has no gradient: the node records none.
  GradientTape tape;
  Tensor w = x.copy();
  tape.watch(w);
  EXPECT_FALSE(tape.gradient(keras_op("numpy.Floor", Json::object(), x0)->call({w}, CallContext{})[0], {w})[0].defined());
}

TEST(OpNodes, TensorFlowFunctionsGradients) {
  std::mt19937 g(4);
  const Tensor x = distinct(g, {2, 3, 4}), y = distinct(g, {2, 3, 4});
  expect_gradients(tf_op("math.squared_difference", {in(0)}, {{"y", in(1)}, {"name", nullptr}}), {x, y});
  expect_gradients(tf_op("math.l2_normalize", {in(0)}, {{"axis", 1}}), {x});
  expect_gradients(tf_op("__operators__.getitem", {in(0)},
                         {{"slice_spec", {{{"start", 1}, {"stop", nullptr}, {"step", nullptr}}, -1}}}),
                   {x});
  expect_gradients(tf_op("gather", {in(0)}, {{"indices", {2, 0}}, {"axis", 1}}), {x});
  expect_gradients(tf_op("math.reduce_std", {in(0)}, {{"axis", Json::array({1, 2})}}), {x});
}

// Where Keras's or TensorFlow's semantics have a corner (values checked against Keras 3.15 / TF 2.21).
TEST(OpNodes, DialectDefaultsAndCorners) {
  const Tensor x = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  auto values = [](const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.size()); };
  // tf.gather's axis defaults to 0; keras.ops.take's (None) flattens, and wraps negative indices.
  EXPECT_EQ(values(tf_op("gather", {in(0)}, {{"indices", {1}}})->call({x}, CallContext{})[0]), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(values(keras_op("numpy.Take", {{"axis", nullptr}}, {in(0), {-1, 1}})->call({x}, CallContext{})[0]),
            (std::vector<float>{6, 2}));
  // keras.ops.softmax(x, axis=None): over every element.
  const Tensor s = keras_op("nn.Softmax", {{"axis", nullptr}}, {in(0)})->call({x}, CallContext{})[0];
  float total = 0;
  for (float v : values(s)) total += v;
  EXPECT_NEAR(total, 1.f, 1e-6);
  // keras.ops.normalize(x, axis=None): over every element.
  const Tensor n = keras_op("nn.Normalize", {{"axis", nullptr}}, {in(0)})->call({x}, CallContext{})[0];
  EXPECT_NEAR(n.data<float>()[5], 6.f / std::sqrt(91.f), 1e-6);
  // A row of -inf: logsumexp -inf, as TensorFlow's.
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor l = keras_op("math.Logsumexp", {{"axis", -1}}, {in(0)})->call({Tensor::from_vector({1, 2}, {-inf, -inf})}, CallContext{})[0];
  EXPECT_EQ(l.data<float>()[0], -inf);
  // Casts to int8 / uint8 wrap, as TensorFlow's (keras.ops.cast of [-420, 300.7, -3.7] in Keras 3.15 / TF 2.21).
  const Tensor big = Tensor::from_vector({3}, {-420.f, 300.7f, -3.7f});
  EXPECT_EQ(values(keras_op("core.Cast", {{"dtype", "uint8"}}, {in(0)})->call({big}, CallContext{})[0]), (std::vector<float>{92, 44, 253}));
  EXPECT_EQ(values(keras_op("core.Cast", {{"dtype", "int8"}}, {in(0)})->call({big}, CallContext{})[0]), (std::vector<float>{92, 44, -3}));
  // tf_keras writes x // y as compat.v1.floor_div.
  EXPECT_EQ(values(tf_op("compat.v1.floor_div", {in(0)}, {{"y", 4}})->call({x}, CallContext{})[0]),
            (std::vector<float>{0, 0, 0, 1, 1, 1}));
  EXPECT_NE(error_of([&] { tf_op("linalg.matmul", {in(0)}, {{"b", in(1)}, {"transpose_b", true}})->compute_output_shape({{2, 3}, {4, 3}}); })
                .find("transpose_b"),
            std::string::npos);
}

TEST(OpNodes, ErrorsNameTheOpAndTheArgument) {
  const Json x0 = Json::array({in(0)});
  const Tensor t = Tensor::zeros({2, 3, 4});
  EXPECT_NE(error_of([&] {
              keras_op("numpy.Moveaxis", {{"source", {0, 0}}, {"destination", {1, 2}}}, x0)->call({t}, CallContext{});
            }).find("argument 'source' is not a list of distinct axes"),
            std::string::npos);
  EXPECT_NE(error_of([&] { keras_op("numpy.Flip", {{"axis", 3}}, x0)->call({t}, CallContext{}); })
                .find("argument 'axis' is not an axis of the input's 3 dims"),
            std::string::npos);
  EXPECT_NE(error_of([&] { keras_op("numpy.Fft", Json::object(), x0); }).find("keras.src.ops.numpy.Fft, which kerascpp does not support"),
            std::string::npos);
  EXPECT_NE(error_of([&] { tf_op("signal.fft", {in(0)}, Json::object()); }).find("tf.signal.fft, which kerascpp does not support"),
            std::string::npos);
  EXPECT_NE(error_of([&] { keras_op("numpy.Mean", {{"axes", 1}}, x0); }).find("axes=1, which kerascpp does not support"),
            std::string::npos);
  EXPECT_NE(error_of([&] { tf_op("math.reduce_mean", {in(0)}, {{"foo", 3}}); }).find("'tf.math.reduce_mean' (TFOpLambda"),
            std::string::npos);
  const Tensor x = Tensor::zeros({2, 3});
  EXPECT_NE(error_of([&] { keras_op("numpy.GetItem", Json::object(), {in(0), {0, 0, 0}})->compute_output_shape({{2, 3}}); })
                .find("too many indices"),
            std::string::npos);
  EXPECT_NE(error_of([&] { keras_op("numpy.GetItem", Json::object(), {in(0), {5}})->call({x}, CallContext{}); })
                .find("index 5 is out of bounds for axis 0 with size 2"),
            std::string::npos);
  EXPECT_NE(error_of([&] { keras_op("numpy.GetItem", Json::object(), {in(0), {in(1)}})->compute_output_shape({{2, 3}, {2}}); }).find("indexes with"),
            std::string::npos);
  EXPECT_NE(error_of([&] { keras_op("numpy.Reshape", {{"newshape", {4, -1}}}, x0)->compute_output_shape({{2, 3}}); })
                .find("cannot reshape a tensor of shape (2, 3)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { keras_op("numpy.Round", {{"decimals", 2}}, x0)->call({x}, CallContext{}); }).find("decimals"),
            std::string::npos);
  EXPECT_NE(error_of([&] { keras_op("core.Cast", {{"dtype", "complex64"}}, x0)->call({x}, CallContext{}); })
                .find("dtype 'complex64', which kerascpp does not support"),
            std::string::npos);
}

// The ops that make tensors (creation_ops.cpp): values where the graph's results mix samples (so no
// Keras fixture holds them) checked against numpy's, and their gradients.
TEST(OpNodes, CreationOps) {
  std::mt19937 g(6);
  const Tensor lo = distinct(g, {2, 3}), hi = distinct(g, {2, 3}), p = distinct(g, {2, 3}, true);
  const Json ab = Json::array({in(0), in(1)});
  expect_gradients(keras_op("numpy.Linspace", {{"num", 5}, {"axis", 1}}, ab), {lo, hi});
  expect_gradients(keras_op("numpy.Linspace", {{"num", 4}, {"endpoint", false}, {"axis", -1}}, ab), {lo, hi});
  expect_gradients(keras_op("numpy.Logspace", {{"num", 3}, {"base", 2.0}, {"axis", 0}}, ab), {lo, hi});
  expect_gradients(keras_op("numpy.Geomspace", {{"num", 3}, {"axis", 0}}, ab), {p, affine(p, 1.f, 1.f)});
  expect_gradients(keras_op("numpy.Full", {{"shape", {2, 3}}}, Json::array({in(0)})), {Tensor::from_vector({3}, {0.5f, 1.f, 2.f})});
  // numpy.geomspace(1, 1000, 4) and (-1, -16, 4, endpoint=False) (Keras multiplies by start's sign).
  auto values = [](const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.size()); };
  auto geom = [&](float a, float b, Json cfg) {
    return keras_op("numpy.Geomspace", std::move(cfg), ab)->call({Tensor::from_vector({}, {a}), Tensor::from_vector({}, {b})}, CallContext{})[0];
  };
  const std::vector<float> g1 = values(geom(1.f, 1000.f, {{"num", 4}})), g2 = values(geom(-1.f, -16.f, {{"num", 4}, {"endpoint", false}}));
  const std::vector<float> w1 = {1, 10, 100, 1000}, w2 = {-1, -2, -4, -8};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(g1[i], w1[i], 1e-4f * w1[i]);
    EXPECT_NEAR(g2[i], w2[i], 1e-5f * 8);
  }
  // numpy.histogram([0, 0.5, 1, 1.5, 2, 9], bins=4, range=(0, 2)): counts [1, 1, 1, 2] (the last bin
  // closed), edges [0, 0.5, 1, 1.5, 2]; 9 lies outside.
  const LayerPtr h = keras_op("numpy.Histogram", {{"bins", 4}, {"range", {0.0, 2.0}}}, Json::array({in(0)}));
  const std::vector<Tensor> hr = h->call({Tensor::from_vector({6}, {0.f, 0.5f, 1.f, 1.5f, 2.f, 9.f})}, CallContext{});
  EXPECT_EQ(values(hr[0]), (std::vector<float>{1, 1, 1, 2}));
  EXPECT_EQ(values(hr[1]), (std::vector<float>{0, 0.5f, 1, 1.5f, 2}));
  EXPECT_EQ(h->compute_output_shape({{6}}), (std::vector<Shape>{{4}, {5}}));
  EXPECT_EQ(values(keras_op("numpy.Array", {{"dtype", "int32"}}, Json::array({in(0)}))->call({Tensor::from_vector({2}, {-1.7f, 2.5f})}, CallContext{})[0]),
            (std::vector<float>{-1, 2}));
  EXPECT_NE(error_of([&] { keras_op("numpy.Linspace", {{"num", -1}}, ab)->compute_output_shape({{2}, {2}}); }).find("argument 'num'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { keras_op("numpy.Full", {{"shape", {2}}}, Json::array({in(0)}))->compute_output_shape({{3}}); })
                .find("cannot be broadcast to shape (2,)"),
            std::string::npos);
}

// Hostile configs: sizes beyond what a tensor can count, and integers that do not fit, are errors,
// never a wrapped size or a narrowed value.
TEST(OpNodes, HostileArgumentsAreErrors) {
  const Json x0 = Json::array({in(0)});
  const Tensor v = Tensor::from_vector({2}, {1.f, 2.f});
  const std::string huge = error_of([&] { keras_op("numpy.Diag", {{"k", 2147483647}}, x0)->call({v}, CallContext{}); });
  EXPECT_NE(huge.find("more"), std::string::npos) << huge;
  const std::string wide = error_of([&] { keras_op("numpy.Diag", {{"k", 4294967295ull}}, x0)->call({v}, CallContext{}); });
  EXPECT_NE(wide.find("argument 'k' is not an integer in range"), std::string::npos) << wide;
  const std::string axis = error_of([&] { keras_op("numpy.Mean", {{"axis", {4294967295ull}}}, x0)->call({v}, CallContext{}); });
  EXPECT_NE(axis.find("argument 'axis' is not a list of ints"), std::string::npos) << axis;
  EXPECT_NE(error_of([&] { Tensor::empty({int64_t(1) << 40, int64_t(1) << 40}); }).find("more elements than kerascpp can count"),
            std::string::npos);
}

// Integer arguments are checked by value whichever way JSON holds them (a parsed file keeps 3 unsigned,
// a config built in code keeps it signed) and whatever the target type.
TEST(OpNodes, IntegerArgumentsFitByValue) {
  const std::vector<Shape> none;
  const std::string who = "Operation 'test'";
  const Json parsed = Json::parse(R"({"n": 3, "neg": -2, "big": 18446744073709551615})");
  const Json built = {{"n", int64_t{3}}, {"neg", int64_t{-2}}, {"big", std::numeric_limits<uint64_t>::max()}};
  for (const Json* bound : {&parsed, &built}) {
    const layers::op_nodes::Args<Shape> a(*bound, none, who);
    EXPECT_EQ(a.get<int>("n", 0), 3);
    EXPECT_EQ(a.get<uint64_t>("n", 0), 3u);
    EXPECT_EQ(a.get<size_t>("n", 0), 3u);
    EXPECT_EQ(a.get<int64_t>("neg", 0), -2);
    EXPECT_EQ(a.get<uint64_t>("big", 0), std::numeric_limits<uint64_t>::max());
    EXPECT_NE(error_of([&] { a.get<uint64_t>("neg", 0); }).find("argument 'neg' is not an integer in range"), std::string::npos);
    EXPECT_NE(error_of([&] { a.get<int64_t>("big", 0); }).find("argument 'big' is not an integer in range"), std::string::npos);
    EXPECT_NE(error_of([&] { a.get<uint8_t>("neg", 0); }).find("not an integer in range"), std::string::npos);
  }
}

// Shapes that the graph computes (tf_keras: tf.reshape(x, [tf.shape(x)[0], -1, 2])): unknown dims when
// the graph is built, the tensor's values when the model runs; gradients flow to x.
TEST(OpNodes, ComputedShapes) {
  std::mt19937 g(8);
  const Tensor x = distinct(g, {2, 3, 4});
  const Tensor batch = Tensor::from_vector({}, {2.f}), dims = Tensor::from_vector({3}, {2.f, 3.f, 4.f});
  const LayerPtr r = tf_op("reshape", {in(0)}, {{"shape", {in(1), -1, 2}}});
  EXPECT_EQ(r->compute_output_shape({{-1, 3, 4}, {}})[0], (Shape{-1, -1, 2}));
  EXPECT_EQ(r->call({x, batch}, CallContext{})[0].shape(), (Shape{2, 6, 2}));
  GradientCheck c = check_gradients([&](const std::vector<Tensor>& v) { return r->call({v[0], batch}, CallContext{})[0]; }, {x}, 1e-3);
  EXPECT_LE(c.max_error, 2e-2);
  const LayerPtr t = tf_op("tile", {in(0)}, {{"multiples", {1, in(1), 1}}});
  EXPECT_EQ(t->compute_output_shape({{-1, 3, 4}, {}})[0], (Shape{-1, -1, 4}));
  EXPECT_EQ(t->call({x, batch}, CallContext{})[0].shape(), (Shape{2, 6, 4}));
  EXPECT_EQ(tf_op("zeros", {in(0)}, Json::object())->compute_output_shape({{3}})[0], (Shape{-1, -1, -1}));
  EXPECT_EQ(tf_op("fill", {in(0), 0.5}, Json::object())->call({dims}, CallContext{})[0].shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(tf_op("broadcast_to", {in(0)}, {{"shape", in(1)}})->call({Tensor::from_vector({4}, {1, 2, 3, 4}), dims}, CallContext{})[0].shape(),
            (Shape{2, 3, 4}));
  // A shape tensor of unknown length cannot be built into a graph; a fractional value is an error.
  EXPECT_NE(error_of([&] { tf_op("zeros", {in(0)}, Json::object())->compute_output_shape({{-1}}); }).find("needs its length"),
            std::string::npos);
  EXPECT_NE(error_of([&] { r->call({x, Tensor::from_vector({}, {NAN})}, CallContext{}); }).find("is not an integer"),
            std::string::npos);
}

// Ops that Keras 3 records and kerascpp refuses say why; an unknown one names the close supported ones.
TEST(OpNodes, RefusedOpsSayWhy) {
  const Json x0 = Json::array({in(0)});
  EXPECT_NE(error_of([&] { keras_op("core.Map", Json::object(), x0); }).find("takes a Python function"), std::string::npos);
  EXPECT_NE(error_of([&] { keras_op("numpy.Unique", Json::object(), x0); }).find("depends on the input's values"), std::string::npos);
  EXPECT_NE(error_of([&] { keras_op("linalg.Eig", Json::object(), x0); }).find("complex"), std::string::npos);
  const std::string unknown = error_of([&] { keras_op("numpy.Reducemean", Json::object(), x0); });
  EXPECT_NE(unknown.find("which kerascpp does not support"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("README.md"), std::string::npos) << unknown;
  const std::string tf = error_of([&] { tf_op("math.reduce_meanest", x0, Json::object()); });
  EXPECT_NE(tf.find("close names: "), std::string::npos) << tf;
  EXPECT_NE(tf.find("math.reduce_mean"), std::string::npos) << tf;
}

}  // namespace
}  // namespace kerascpp
