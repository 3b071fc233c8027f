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

namespace kerascpp {
namespace {
using testing::error_of;

Json in(int i) { return {{"kerascpp_input", i}}; }

// A Keras 3 op node as io/config_dialect.cpp makes it: its config plus its call's template.
LayerPtr keras_op(const std::string& cls, Json config, Json args, Json kwargs = Json::object()) {
  config["name"] = "op";
  config["call"] = {{"args", std::move(args)}, {"kwargs", std::move(kwargs)}};
  return make_layer("keras.src.ops." + cls, config);
}
LayerPtr tf_op(const std::string& function, Json args, Json kwargs) {
  Json config = {{"name", "tf." + function}, {"function", function}, {"trainable", true}, {"dtype", "float32"}};
  config["call"] = {{"args", std::move(args)}, {"kwargs", std::move(kwargs)}};
  return make_layer(function == "__operators__.getitem" ? "SlicingOpLambda" : "TFOpLambda", config);
}

// Values in +-[0.2, 1.2], all distinct (gaps of 0.01): a step of 1e-3 crosses no kink nor tie.
Tensor distinct(std::mt19937& g, const Shape& shape, bool positive = false) {
  Tensor t = Tensor::empty(shape);
  std::vector<float> v(t.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.2f + 0.01f * static_cast<float>(i);
  std::shuffle(v.begin(), v.end(), g);
  std::bernoulli_distribution sign(0.5);
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = positive || !sign(g) ? v[i] : -v[i];
  return t;
}

Tensor affine(const Tensor& t, float a, float b) {  // a t + b
  Tensor r = t.copy();
  for (int64_t i = 0; i < r.size(); ++i) r.data<float>()[i] = a * t.data<float>()[i] + b;
  return r;
}

// The node's gradients for all of its inputs, by central differences (relative error over a floor
// of 1e-3: a wrong sign scores 2). Also checks that the inferred shape is the computed one.
void expect_gradients(const LayerPtr& op, const std::vector<Tensor>& inputs, double tol = 2e-2) {
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  const Tensor y = op->call(inputs, CallContext{})[0];
  EXPECT_EQ(op->compute_output_shape(shapes)[0], y.shape()) << op->name();
  GradientCheck c = check_gradients([&](const std::vector<Tensor>& x) { return op->call(x, CallContext{})[0]; }, inputs, 1e-3);
  EXPECT_LE(c.max_error, tol) << op->class_name() << " " << op->get_config()["call"].dump() << ": " << c.worst;
}

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
  // Casts to int8 / uint8 saturate.
  const Tensor big = Tensor::from_vector({3}, {-420.f, 300.7f, -3.7f});
  EXPECT_EQ(values(keras_op("core.Cast", {{"dtype", "uint8"}}, {in(0)})->call({big}, CallContext{})[0]), (std::vector<float>{0, 255, 0}));
  EXPECT_EQ(values(keras_op("core.Cast", {{"dtype", "int8"}}, {in(0)})->call({big}, CallContext{})[0]), (std::vector<float>{-128, 127, -3}));
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

}  // namespace
}  // namespace kerascpp
