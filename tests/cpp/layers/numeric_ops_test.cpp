// Numeric op nodes (numeric_ops*.cpp): each differentiable op's backward against central finite
// differences, values at corners against what TensorFlow 2.21 / Keras 3 print for them, the integer ops'
// int32 semantics, and the errors for values kerascpp cannot run. Forward values in general are checked
// against Keras by the numeric_* fixtures.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "../test_errors.h"
#include "kerascpp/autodiff.h"
#include "kerascpp/kerascpp.h"
#include "op_node_testing.h"

namespace kerascpp {
namespace {
using testing::error_of;

using namespace op_node_testing;  // NOLINT: the helpers of every op node test

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.size());
}
Tensor vec(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector({n}, std::move(v));
}
// The node's output for these inputs, after checking that its inferred shape is the computed one.
Tensor run(const LayerPtr& op, const std::vector<Tensor>& inputs) {
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  const Tensor y = op->call(inputs, CallContext{})[0];
  EXPECT_EQ(op->compute_output_shape(shapes)[0], y.shape()) << op->class_name();
  return y;
}
// Relative agreement with TensorFlow's float32 values (NaN and infinities exactly).
void expect_close(const Tensor& got, const std::vector<float>& want, double rel = 2e-6) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const float g = got.data<float>()[i], w = want[i];
    if (std::isnan(w) || std::isinf(w)) {
      EXPECT_TRUE(std::isnan(w) ? std::isnan(g) : g == w) << i << ": " << g << " vs " << w;
    } else {
      EXPECT_NEAR(g, w, rel * std::max(std::fabs(w), 1e-30f)) << i;
    }
  }
}
const Json x0 = Json::array({in(0)}), xy = Json::array({in(0), in(1)});

TEST(NumericOps, Gradients) {
  std::mt19937 g(11);
  const Tensor x = distinct(g, {2, 3, 4}), y = affine(distinct(g, {2, 3, 4}), 1.f, 0.005f),
               p = distinct(g, {2, 3, 4}, true);
  for (const char* cls : {"numpy.Fabs", "numpy.Abs", "math.Erfc", "numpy.Sinc", "numpy.I0"})
    expect_gradients(keras_op(cls, Json::object(), x0), {affine(x, 2.f, 0.f)});
  expect_gradients(keras_op("math.Erfinv", Json::object(), x0), {affine(x, 0.75f, 0.f)});
  for (const char* fn : {"math.bessel_i0", "math.bessel_i0e", "math.bessel_i1", "math.bessel_i1e",
                         "math.erfc", "math.lgamma", "math.digamma", "math.reciprocal_no_nan"})
    expect_gradients(tf_op(fn, x0, Json::object()), {affine(x, 3.f, 0.f)});
  expect_gradients(tf_op("math.ndtri", x0, Json::object()), {affine(x, 0.35f, 0.5f)});  // in (0, 1)
  expect_gradients(tf_op("math.lgamma", x0, Json::object()), {affine(p, 8.f, 0.f)});
  for (const char* cls : {"numpy.Fmax", "numpy.Fmin", "numpy.Logaddexp2", "numpy.DivideNoNan"})
    expect_gradients(keras_op(cls, Json::object(), xy), {x, y});
  expect_gradients(keras_op("numpy.Fmod", Json::object(), xy), {affine(x, 3.f, 0.f), affine(p, 1.f, 0.405f)});
  for (const char* fn : {"math.xdivy", "math.divide_no_nan", "math.multiply_no_nan"})
    expect_gradients(tf_op(fn, {in(0)}, {{"y", in(1)}}), {x, y});
  for (const char* fn : {"math.xlogy", "math.xlog1py"})
    expect_gradients(tf_op(fn, xy, Json::object()), {x, p});
  expect_gradients(keras_op("numpy.Ldexp", Json::object(), {in(0), {1, -2, 3, 0}}), {x});
  // Piecewise constant and boolean results record no gradient.
  GradientTape tape;
  Tensor w = x.copy();
  tape.watch(w);
  for (const LayerPtr& op : {keras_op("numpy.Isclose", Json::object(), {in(0), 0.5, 0.1, 0.1}),
                             keras_op("numpy.Nextafter", Json::object(), {in(0), 1.0})})
    EXPECT_FALSE(tape.gradient(op->call({w}, CallContext{})[0], {w})[0].defined()) << op->class_name();
}

// Values TensorFlow 2.21's float32 kernels (through Keras 3 where a keras.ops class exists) print.
TEST(NumericOps, ValuesOfTensorFlow) {
  expect_close(run(tf_op("math.erfc", x0, Json::object()), {vec({-2.f, 0.3f, 1.f, 3.f, 5.f, 9.f})}),
               {1.9953222274780273f, 0.671373188495636f, 0.1572992205619812f, 2.2090496713644825e-05f,
                1.537460046427408e-12f, 4.137031708073991e-37f});
  const Tensor b = vec({0.f, 0.3f, -1.7f, 4.f, 20.f, 100.f, 800.f});
  expect_close(run(tf_op("math.bessel_i0", x0, Json::object()), {b}),
               {1.f, 1.022627353668213f, 1.8639649152755737f, 11.301920890808105f, 43558276.f, kInf, kInf});
  expect_close(run(keras_op("numpy.I0", Json::object(), x0), {b}),
               {1.f, 1.022627353668213f, 1.8639649152755737f, 11.301920890808105f, 43558276.f, kInf, kInf});
  expect_close(run(tf_op("math.bessel_i0e", x0, Json::object()), {b}),
               {1.f, 0.7575809359550476f, 0.340515673160553f, 0.20700190961360931f, 0.0897803008556366f,
                0.03994438052177429f, 0.01410694606602192f});
  expect_close(run(tf_op("math.bessel_i1", x0, Json::object()), {b}),
               {0.f, 0.15169386565685272f, -1.1963461637496948f, 9.759467124938965f, 42454972.f, kInf, kInf});
  expect_close(run(tf_op("math.bessel_i1e", x0, Json::object()), {b}),
               {0.f, 0.11237756907939911f, -0.21855272352695465f, 0.1787508726119995f, 0.08750621974468231f,
                0.03974415361881256f, 0.014098125509917736f});
  expect_close(run(tf_op("math.bessel_i1e", x0, Json::object()), {vec({1e4f, -1e4f, kInf})}),
               {0.003989272750914097f, -0.003989272750914097f, 0.f});
  expect_close(run(tf_op("math.digamma", x0, Json::object()),
                   {vec({1.4f, 1.5f, 0.5f, -1.5f, 3.7f, 1e-3f, -0.3f, 20.f})}),
               {-0.06138491630554199f, 0.03648996353149414f, -1.9635107517242432f, 0.7031568288803101f,
                1.1671535968780518f, -1000.5755615234375f, 2.113309860229492f, 2.9705238342285156f},
               2e-5);  // TensorFlow's float32 psi near its root at 1.46 is good to ~1e-8 absolute
  expect_close(
      run(tf_op("math.digamma", x0, Json::object()), {vec({0.f, -2.f, -2.5f, 1e-30f, 1e30f, kInf, -kInf})}),
      {kNaN, kNaN, 1.1031568050384521f, -1.0000000150474662e+30f, 69.07755279541016f, kInf, kNaN});
  expect_close(
      run(tf_op("math.lgamma", x0, Json::object()), {vec({0.f, -2.f, -2.5f, 1e-30f, 1e30f, kInf, -kInf})}),
      {kInf, kInf, -0.056243713945150375f, 69.07755279541016f, 6.807755301009307e+31f, kInf, kInf});
  // TensorFlow's erfinv rounds (x + 1) / 2 to float32 first: 1 - 2^-24 is inf, 1e-30 is 0.
  expect_close(
      run(keras_op("math.Erfinv", Json::object(), x0), {vec({1.f, -1.f, 1.5f, 0.f, 1e-30f, 0.99999994f})}),
      {kInf, -kInf, kNaN, 0.f, 0.f, kInf});
  expect_close(
      run(tf_op("math.ndtri", x0, Json::object()), {vec({0.f, 1.f, 1.5f, 0.5f, 1e-30f, 0.99999994f})}),
      {-kInf, kInf, kNaN, 0.f, -11.46402359008789f, 5.294703960418701f});
  expect_close(
      run(keras_op("numpy.Sinc", Json::object(), x0), {vec({0.f, 1.f, 0.5f, 2.f, -0.3f})}),
      {1.f, -2.7827534054836178e-08f, 0.6366197466850281f, 2.7827534054836178e-08f, 0.858393669128418f},
      1e-5);
  expect_close(run(keras_op("numpy.Fmod", Json::object(), xy),
                   {vec({5.5f, -5.5f, 0.f, 3.f, kInf}), vec({2.f, 2.f, 0.f, 0.f, 2.f})}),
               {1.5f, -1.5f, kNaN, kNaN, kNaN});
  expect_close(run(keras_op("numpy.Logaddexp2", Json::object(), xy),
                   {vec({-kInf, kInf, 1.f}), vec({-kInf, kInf, kNaN})}),
               {-kInf, kInf, kNaN});
  expect_close(run(keras_op("numpy.Fmax", Json::object(), xy),
                   {vec({kNaN, 1.f, kNaN, 2.f}), vec({1.f, kNaN, kNaN, 3.f})}),
               {1.f, 1.f, kNaN, 3.f});
  expect_close(run(keras_op("numpy.Fmin", Json::object(), xy),
                   {vec({kNaN, 1.f, kNaN, 2.f}), vec({1.f, kNaN, kNaN, 3.f})}),
               {1.f, 1.f, kNaN, 2.f});
  expect_close(run(keras_op("numpy.Ldexp", Json::object(), xy),
                   {vec({0.25f, 3.f, -0.f, kInf}), vec({129.f, -150.f, 3.f, -3.f})}),
               {kInf, 0.f, 0.f, kInf});
  expect_close(run(tf_op("math.xlogy", xy, Json::object()), {vec({0.f, 0.f, 1.f}), vec({0.f, -1.f, 0.f})}),
               {0.f, 0.f, -kInf});
  expect_close(run(tf_op("math.xdivy", xy, Json::object()), {vec({0.f, 1.f}), vec({0.f, 0.f})}), {0.f, kInf});
  expect_close(
      run(tf_op("math.multiply_no_nan", xy, Json::object()), {vec({kInf, kNaN, 2.f}), vec({0.f, 0.f, 3.f})}),
      {0.f, 0.f, 6.f});
  expect_close(run(tf_op("math.divide_no_nan", xy, Json::object()), {vec({kNaN, 1.f}), vec({0.f, 4.f})}),
               {0.f, 0.25f});
  expect_close(run(tf_op("math.reciprocal_no_nan", x0, Json::object()), {vec({0.f, 4.f})}), {0.f, 0.25f});
  // tf.math.nextafter steps one float32; keras.ops.nextafter goes through float64 and back.
  expect_close(run(tf_op("math.nextafter", xy, Json::object()), {vec({1.f, 0.f}), vec({2.f, 1.f})}),
               {1.0000001f, 1.4e-45f});
  expect_close(run(keras_op("numpy.Nextafter", Json::object(), xy), {vec({1.f, 0.f}), vec({2.f, 1.f})}),
               {1.f, 0.f});
}

TEST(NumericOps, IntegersAsTensorFlowComputesThem) {
  const Tensor x = vec({5, -5, 1, -1, 7, 1 << 20});
  for (auto [s, left, right] : std::vector<std::tuple<float, std::vector<float>, std::vector<float>>>{
           {-1.f, {5, -5, 1, -1, 7, 1 << 20}, {5, -5, 1, -1, 7, 1 << 20}},
           {3.f, {40, -40, 8, -8, 56, 8388608}, {0, -1, 0, -1, 0, 131072}},
           {40.f,
            {-2147483648.f, -2147483648.f, -2147483648.f, -2147483648.f, -2147483648.f, 0},
            {0, -1, 0, -1, 0, 0}}}) {
    EXPECT_EQ(values(run(keras_op("numpy.LeftShift", Json::object(), {in(0), s}), {x})), left) << s;
    EXPECT_EQ(values(run(tf_op("bitwise.left_shift", {in(0)}, {{"y", s}}), {x})), left) << s;
    EXPECT_EQ(values(run(keras_op("numpy.BitwiseRightShift", Json::object(), {in(0), s}), {x})), right) << s;
  }
  const Tensor a = Tensor::from_vector({2, 3}, {12, -18, 0, 7, 0, -6}), b = vec({8, 12, 5});
  EXPECT_EQ(values(run(keras_op("numpy.Gcd", Json::object(), xy), {a, b})),
            (std::vector<float>{4, 6, 5, 1, 12, 1}));
  EXPECT_EQ(values(run(keras_op("numpy.Lcm", Json::object(), xy), {a, b})),
            (std::vector<float>{24, 36, 0, 56, 0, 30}));
  // int32 wraps around: 65535 * 65537 is 2^32 - 1.
  EXPECT_EQ(values(run(keras_op("numpy.Lcm", Json::object(), xy), {vec({65535}), vec({65537})})),
            (std::vector<float>{-1}));
  const Tensor i = vec({12, -7, 0, 255}), j = vec({10, 3, -1, -256});
  EXPECT_EQ(values(run(keras_op("numpy.BitwiseAnd", Json::object(), xy), {i, j})),
            (std::vector<float>{8, 1, 0, 0}));
  EXPECT_EQ(values(run(keras_op("numpy.BitwiseOr", Json::object(), xy), {i, j})),
            (std::vector<float>{14, -5, -1, -1}));
  EXPECT_EQ(values(run(tf_op("bitwise.bitwise_xor", xy, Json::object()), {i, j})),
            (std::vector<float>{6, -6, -1, -1}));
  EXPECT_EQ(values(run(keras_op("numpy.BitwiseNot", Json::object(), x0), {i})),
            (std::vector<float>{-13, 6, -1, -256}));
  EXPECT_EQ(values(run(tf_op("bitwise.invert", x0, Json::object()), {i})),
            (std::vector<float>{-13, 6, -1, -256}));
}

TEST(NumericOps, BooleansAndConstants) {
  const Tensor x = Tensor::from_vector({2, 3}, {1.f, 2.f, kNaN, -kInf, kInf, 0.f});
  EXPECT_EQ(values(run(keras_op("numpy.IsIn", Json::object(), {in(0), {{2.0, kNaN}, {0.0, 7.0}}}), {x})),
            (std::vector<float>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(values(run(keras_op("numpy.IsIn", {{"assume_unique", true}, {"invert", true}}, xy),
                       {x, vec({1.f, -kInf})})),
            (std::vector<float>{0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(values(run(keras_op("numpy.Isneginf", Json::object(), x0), {x})),
            (std::vector<float>{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(values(run(keras_op("numpy.Isposinf", Json::object(), x0), {x})),
            (std::vector<float>{0, 0, 0, 0, 1, 0}));
  // isclose: |x1 - x2| <= atol + rtol |x2|, rtol and atol positional in the call, equal_nan in the config.
  const Tensor u = vec({1.f, 1.f, kNaN, kInf, 100.f}), v = vec({1.05f, 1.2f, kNaN, kInf, 104.f});
  EXPECT_EQ(values(run(keras_op("numpy.Isclose", Json::object(), {in(0), in(1), 0.05, 0.01}), {u, v})),
            (std::vector<float>{1, 0, 0, 0, 1}));
  EXPECT_EQ(values(run(keras_op("numpy.Isclose", {{"equal_nan", true}}, xy), {u, u})),
            (std::vector<float>{1, 1, 1, 0, 1}));
  // allclose: one boolean; equal infinities count as close there.
  auto all = [&](Json config, const Tensor& p, const Tensor& q) {
    return values(run(keras_op("numpy.AllClose", std::move(config), xy), {p, q}))[0];
  };
  EXPECT_EQ(all({{"equal_nan", true}}, u, u), 1.f);
  EXPECT_EQ(all(Json::object(), u, u), 0.f);  // NaN
  EXPECT_EQ(all({{"rtol", 0.05}}, vec({1.f, kInf, 100.f}), vec({1.04f, kInf, 104.f})), 1.f);
  EXPECT_EQ(all({{"rtol", 0.03}}, vec({1.f, kInf, 100.f}), vec({1.04f, kInf, 104.f})), 0.f);
  EXPECT_EQ(all(Json::object(), vec({1.f}), vec({-kInf})), 0.f);
  EXPECT_EQ(values(run(keras_op("numpy.Ndim", Json::object(), x0), {x})), (std::vector<float>{2}));
  EXPECT_EQ(values(run(keras_op("numpy.Size", Json::object(), x0), {x})), (std::vector<float>{6}));
  auto monotonic = [&](const char* fn, std::vector<float> v) {
    return values(run(tf_op(fn, x0, Json::object()), {vec(std::move(v))}))[0];
  };
  EXPECT_EQ(monotonic("math.is_non_decreasing", {1, 1, 2}), 1.f);
  EXPECT_EQ(monotonic("math.is_strictly_increasing", {1, 1, 2}), 0.f);
  EXPECT_EQ(monotonic("math.is_strictly_increasing", {-1, 1, 2}), 1.f);
  EXPECT_EQ(monotonic("math.is_non_decreasing", {2, 1}), 0.f);
  EXPECT_EQ(monotonic("math.is_non_decreasing", {kInf, kInf}), 0.f);  // inf - inf is NaN, as TensorFlow's
  EXPECT_EQ(monotonic("math.is_strictly_increasing", {3}), 1.f);
}

TEST(NumericOps, Errors) {
  auto message = [](const LayerPtr& op, const std::vector<Tensor>& in) {
    return error_of([&] { op->call(in, CallContext{}); });
  };
  std::string e =
      message(keras_op("numpy.BitwiseAnd", Json::object(), xy), {vec({1.f, 2.f}), vec({1.f, 2.5f})});
  EXPECT_NE(e.find("BitwiseAnd"), std::string::npos) << e;
  EXPECT_NE(e.find("argument 'y' holds 2.5, which is not an integer"), std::string::npos) << e;
  e = message(tf_op("bitwise.invert", x0, Json::object()), {vec({3e7f})});
  EXPECT_NE(e.find("tf.bitwise.invert"), std::string::npos) << e;
  EXPECT_NE(e.find("argument 'x' holds"), std::string::npos) << e;
  EXPECT_NE(e.find("beyond 2^24"), std::string::npos) << e;
  e = message(keras_op("numpy.Gcd", Json::object(), xy), {vec({kNaN}), vec({2.f})});
  EXPECT_NE(e.find("argument 'x1'"), std::string::npos) << e;
  e = message(keras_op("numpy.Ldexp", Json::object(), xy), {vec({1.f}), vec({0.5f})});
  EXPECT_NE(e.find("Ldexp"), std::string::npos) << e;
  EXPECT_NE(e.find("argument 'x2'"), std::string::npos) << e;
  e = message(keras_op("numpy.Lcm", Json::object(), xy), {vec({1.f, 2.f}), vec({1.f, 2.f, 3.f})});
  EXPECT_FALSE(e.empty());
  e = error_of([] { keras_op("numpy.Isclose", {{"tolerance", 2}}, xy); });
  EXPECT_NE(e.find("Isclose"), std::string::npos) << e;
  EXPECT_NE(e.find("tolerance"), std::string::npos) << e;
  e = message(keras_op("numpy.Isclose", Json::object(), {in(0), in(1), "big"}), {vec({1.f}), vec({1.f})});
  EXPECT_NE(e.find("argument 'rtol'"), std::string::npos) << e;
}

}  // namespace
}  // namespace kerascpp
