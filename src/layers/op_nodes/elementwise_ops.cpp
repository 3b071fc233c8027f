// Elementwise op nodes: keras.ops.numpy / nn / math / core functions of one or two tensors, and the
// tf.math / tf.nn functions and Python operators tf_keras records as TFOpLambda.
#include <algorithm>
#include <cmath>

#include "layers/op_nodes/op_node.h"
#include "ops/grad_util.h"

namespace kerascpp::layers::op_nodes {
namespace {
using ops::BinaryOp;
using ops::UnaryOp;

template <UnaryOp op>
Tensor unary(const Args<Tensor>& a) {
  return ops::unary(op, a.value("x"));
}
template <BinaryOp op>
Tensor binary(const Args<Tensor>& a) {
  return ops::binary(op, a.value("x"), a.value("y"));
}
template <ops::ScalarFn f, ops::ScalarGrad df>
Tensor mapped(const Args<Tensor>& a) {
  return ops::map_unary(a.who().c_str(), a.value("x"), f, df);
}
template <ops::ScalarFn2 f>
Tensor compared(const Args<Tensor>& a) {  // booleans as 1 / 0, no gradient
  return ops::map_binary(a.who().c_str(), a.value("x"), a.value("y"), f, nullptr, nullptr);
}

// d/dx of y = f(x) for the functions below, given x and y.
float neg_d(float, float) { return -1.f; }
float sin_d(float x, float) { return std::cos(x); }
float cos_d(float x, float) { return -std::sin(x); }
float log1p_d(float x, float) { return 1.f / (1.f + x); }
float expm1_d(float, float y) { return y + 1.f; }
float reciprocal_d(float, float y) { return -y * y; }
float rsqrt_d(float x, float y) { return -0.5f * y / x; }
float erf_d(float x, float) { return 1.1283791670955126f * std::exp(-x * x); }
float log_sigmoid(float x) { return x >= 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x)); }
float log_sigmoid_d(float x, float) { return 1.f / (1.f + std::exp(x)); }
float negative(float x) { return -x; }
float sign(float x) { return static_cast<float>((x > 0) - (x < 0)); }
float floor_(float x) { return std::floor(x); }
float ceil_(float x) { return std::ceil(x); }
float round_even(float x) { return std::nearbyint(x); }  // numpy and TF round halves to even
float sin_(float x) { return std::sin(x); }
float cos_(float x) { return std::cos(x); }
float log1p_(float x) { return std::log1p(x); }
float expm1_(float x) { return std::expm1(x); }
float reciprocal(float x) { return 1.f / x; }
float rsqrt(float x) { return 1.f / std::sqrt(x); }
float erf_(float x) { return std::erf(x); }
float logical_not(float x) { return x == 0.f ? 1.f : 0.f; }
float tan_(float x) { return std::tan(x); }
float tan_d(float, float y) { return 1.f + y * y; }
float asin_(float x) { return std::asin(x); }
float asin_d(float x, float) { return 1.f / std::sqrt(1.f - x * x); }
float acos_(float x) { return std::acos(x); }
float acos_d(float x, float) { return -1.f / std::sqrt(1.f - x * x); }
float atan_(float x) { return std::atan(x); }
float atan_d(float x, float) { return 1.f / (1.f + x * x); }
float sinh_(float x) { return std::sinh(x); }
float sinh_d(float x, float) { return std::cosh(x); }
float cosh_(float x) { return std::cosh(x); }
float cosh_d(float x, float) { return std::sinh(x); }
float asinh_(float x) { return std::asinh(x); }
float asinh_d(float x, float) { return 1.f / std::sqrt(x * x + 1.f); }
float acosh_(float x) { return std::acosh(x); }
float acosh_d(float x, float) { return 1.f / std::sqrt(x * x - 1.f); }
float atanh_(float x) { return std::atanh(x); }
float atanh_d(float x, float) { return 1.f / (1.f - x * x); }
float log2_(float x) { return std::log2(x); }
float log2_d(float x, float) { return 1.4426950408889634f / x; }
float log10_(float x) { return std::log10(x); }
float log10_d(float x, float) { return 0.4342944819032518f / x; }
float exp2_(float x) { return std::exp2(x); }
float exp2_d(float, float y) { return 0.6931471805599453f * y; }
float cbrt_(float x) { return std::cbrt(x); }
float cbrt_d(float, float y) { return 1.f / (3.f * y * y); }
float trunc_(float x) { return std::trunc(x); }
float deg2rad(float x) { return x * 0.017453292519943295f; }
float deg2rad_d(float, float) { return 0.017453292519943295f; }
float rad2deg(float x) { return x * 57.29577951308232f; }
float rad2deg_d(float, float) { return 57.29577951308232f; }
float is_nan(float x) { return std::isnan(x) ? 1.f : 0.f; }
float is_inf(float x) { return std::isinf(x) ? 1.f : 0.f; }
float is_finite(float x) { return std::isfinite(x) ? 1.f : 0.f; }
float signbit_(float x) { return std::signbit(x) ? 1.f : 0.f; }

float power(float a, float b) { return std::pow(a, b); }
float power_da(float a, float b, float) { return b == 0.f ? 0.f : b * std::pow(a, b - 1.f); }
float power_db(float a, float, float y) { return a > 0.f ? y * std::log(a) : 0.f; }
float floor_divide(float a, float b) { return std::floor(a / b); }
float mod(float a, float b) {  // Python's %: the result takes the divisor's sign
  const float r = std::fmod(a, b);
  return r != 0.f && ((r < 0) != (b < 0)) ? r + b : r;
}
float mod_da(float, float, float) { return 1.f; }  // x - y floor(x / y), as TensorFlow's FloorMod
float mod_db(float a, float b, float) { return -std::floor(a / b); }
float squared_difference(float a, float b) { return (a - b) * (a - b); }
float sqd_da(float a, float b, float) { return 2.f * (a - b); }
float sqd_db(float a, float b, float) { return 2.f * (b - a); }
float equal(float a, float b) { return a == b ? 1.f : 0.f; }
float greater(float a, float b) { return a > b ? 1.f : 0.f; }
float greater_equal(float a, float b) { return a >= b ? 1.f : 0.f; }
float less(float a, float b) { return a < b ? 1.f : 0.f; }
float less_equal(float a, float b) { return a <= b ? 1.f : 0.f; }
float logical_xor(float a, float b) { return (a != 0.f) != (b != 0.f) ? 1.f : 0.f; }
float atan2_(float a, float b) { return std::atan2(a, b); }  // a: y, b: x
float atan2_da(float a, float b, float) { return b / (a * a + b * b); }
float atan2_db(float a, float b, float) { return -a / (a * a + b * b); }
float hypot_(float a, float b) { return std::hypot(a, b); }
float hypot_da(float a, float, float y) { return y == 0.f ? 0.f : a / y; }
float hypot_db(float, float b, float y) { return y == 0.f ? 0.f : b / y; }
float logaddexp(float a, float b) {
  const float m = std::max(a, b);
  return std::isinf(m) ? m : m + std::log1p(std::exp(-std::fabs(a - b)));
}
float logaddexp_da(float a, float, float y) { return std::exp(a - y); }
float logaddexp_db(float, float b, float y) { return std::exp(b - y); }
float heaviside(float a, float b) { return a < 0.f ? 0.f : a > 0.f ? 1.f : b; }

Tensor elu(const Args<Tensor>& a) { return ops::unary(UnaryOp::elu, a.value("x"), a.get("alpha", 1.f)); }
Tensor leaky_relu(const Args<Tensor>& a) {
  return ops::unary(UnaryOp::leaky_relu, a.value("x"), a.get("negative_slope", 0.2f));
}
// keras.ops.gelu defaults to the tanh approximation, tf.nn.gelu to the exact form.
Tensor gelu_keras(const Args<Tensor>& a) {
  return ops::unary(a.get("approximate", true) ? UnaryOp::gelu_approximate : UnaryOp::gelu, a.value("x"));
}
Tensor gelu_tf(const Args<Tensor>& a) {
  return ops::unary(a.get("approximate", false) ? UnaryOp::gelu_approximate : UnaryOp::gelu, a.value("x"));
}
// keras.activations.relu as an op (keras.src.activations.activations.ReLU).
Tensor relu_activation(const Args<Tensor>& a) {
  const Json& m = a.json("max_value");
  return ops::relu(a.value("x"), a.get("negative_slope", 0.f),
                   m.is_null() ? std::numeric_limits<float>::infinity() : a.get("max_value", 0.f), a.get("threshold", 0.f));
}
Tensor round_op(const Args<Tensor>& a) {
  if (a.get("decimals", 0) != 0) a.fail("decimals", "supported by kerascpp other than 0");
  return ops::map_unary("round", a.value("x"), round_even, nullptr);
}
Tensor stop_gradient(const Args<Tensor>& a) { return a.value("x").copy(); }  // fresh bytes: off the tape
Tensor not_equal(const Args<Tensor>& a) { return ops::not_equal(a.value("x"), a.value("y")); }
Tensor logical_or(const Args<Tensor>& a) {
  return ops::binary(BinaryOp::maximum, ops::as_mask(a.value("x")), ops::as_mask(a.value("y")));
}
Tensor logical_and(const Args<Tensor>& a) {
  return ops::binary(BinaryOp::multiply, ops::as_mask(a.value("x")), ops::as_mask(a.value("y")));
}

// where(condition, x, y): x where the condition holds, else y; all three broadcast together.
Shape where_shape(const Args<Shape>& a) {
  if (!a.has("x") || !a.has("y")) a.fail("x", "given (where with one argument returns indices, which kerascpp does not support)");
  return ops::broadcast_shape(ops::broadcast_shape(a.value("condition"), a.value("x")), a.value("y"));
}
Tensor where(const Args<Tensor>& a) {
  const Tensor c = a.value("condition"), x = a.value("x"), y = a.value("y");
  const Shape s = ops::broadcast_shape(ops::broadcast_shape(c.shape(), x.shape()), y.shape());
  return ops::where(c, ops::detail::broadcast_to(x, s), ops::detail::broadcast_to(y, s));
}
Tensor clip(const Args<Tensor>& a) {
  return ops::binary(BinaryOp::minimum, ops::binary(BinaryOp::maximum, a.value("x"), a.value("x_min")), a.value("x_max"));
}
Shape clip_shape(const Args<Shape>& a) {
  return ops::broadcast_shape(ops::broadcast_shape(a.value("x"), a.value("x_min")), a.value("x_max"));
}

float through_half(float x) { return half_to_float(float_to_half(x)); }
float through_bfloat16(float x) { return bfloat16_to_float(float_to_bfloat16(x)); }
float identity_d(float, float) { return 1.f; }
Tensor cast(const Args<Tensor>& a) { return cast_to(a, a.value("x"), "dtype"); }
Tensor convert_to_tensor(const Args<Tensor>& a) {
  for (const char* key : {"dtype", "sparse", "ragged"})
    if (!a.json(key).is_null() && a.json(key) != false) a.fail(key, "supported by kerascpp (only a tensor as it is)");
  return a.value("x");
}

#define UNARY(keras, tf, op) OpDef{keras, tf, {"x"}, {}, same_shape, unary<UnaryOp::op>}
Shape broadcast_shape2(const Args<Shape>& a) { return ops::broadcast_shape(a.value("x1"), a.value("x2")); }

#define MAPPED(keras, tf, f, df) OpDef{keras, tf, {"x"}, {}, same_shape, mapped<f, df>}
#define BINARY(keras, tf, op) OpDef{keras, tf, {"x", "y"}, {}, broadcast_shape, binary<BinaryOp::op>}
#define COMPARED(keras, tf, f) OpDef{keras, tf, {"x", "y"}, {}, broadcast_shape, compared<f>}
// tf.nn's activations call their tensor `features`.
const std::vector<std::pair<std::string, std::string>> kFeatures = {{"features", "x"}};

}  // namespace

// A cast as the op's argument `param` names the dtype: kerascpp computes in float32. A cast to float16 /
// bfloat16 rounds the values as Keras's tensor holds them; to an integer type truncates toward zero
// (int8 / uint8 wrapping, as TensorFlow's cast does); to bool gives 1 / 0.
Tensor cast_to(const Args<Tensor>& a, const Tensor& x, const char* param) {
  const Json& d = a.json(param);
  DType t;
  if (!d.is_string() || !dtype_from_name(d.get<std::string>(), &t)) a.fail(param, "a dtype kerascpp knows");
  switch (t) {
    case DType::float32:
    case DType::float64:
      return x;
    case DType::float16:
      return ops::map_unary("cast", x, through_half, identity_d);
    case DType::bfloat16:
      return ops::map_unary("cast", x, through_bfloat16, identity_d);
    case DType::bool_:
      return ops::as_mask(x);
    case DType::int8:  // TensorFlow's cast wraps: 150.0 -> -106
      return ops::map_unary("cast", x, [](float v) { return std::isfinite(v) ? static_cast<float>(static_cast<int8_t>(static_cast<int64_t>(v))) : 0.f; }, nullptr);
    case DType::uint8:
      return ops::map_unary("cast", x, [](float v) { return std::isfinite(v) ? static_cast<float>(static_cast<uint8_t>(static_cast<int64_t>(v))) : 0.f; }, nullptr);
    default:
      return ops::map_unary("cast", x, [](float v) { return std::trunc(v); }, nullptr);
  }
}

std::vector<OpDef> elementwise_ops() {
  return {
      UNARY("ops.numpy.Sqrt", "math.sqrt|sqrt", sqrt),
      UNARY("ops.numpy.Square", "math.square|square", square),
      UNARY("ops.numpy.Absolute", "math.abs|abs", abs),
      UNARY("ops.numpy.Exp", "math.exp|exp", exp),
      UNARY("ops.numpy.Log", "math.log", log),
      UNARY("ops.numpy.Tanh", "math.tanh|nn.tanh|tanh", tanh),
      UNARY("ops.nn.Sigmoid", "math.sigmoid|nn.sigmoid|sigmoid", sigmoid),
      UNARY("ops.nn.Softplus", "math.softplus|nn.softplus", softplus),
      UNARY("ops.nn.Softsign", "math.softsign|nn.softsign", softsign),
      UNARY("ops.nn.HardSigmoid", nullptr, hard_sigmoid),
      UNARY("ops.nn.HardSilu", nullptr, hard_silu),
      UNARY("ops.nn.Mish", nullptr, mish),
      OpDef{"ops.nn.Relu", "nn.relu", {"x"}, kFeatures, same_shape, unary<UnaryOp::relu>},
      OpDef{"ops.nn.Relu6", "nn.relu6", {"x"}, kFeatures, same_shape, unary<UnaryOp::relu6>},
      OpDef{"ops.nn.Silu", "nn.silu|nn.swish|math.silu", {"x"}, kFeatures, same_shape, unary<UnaryOp::silu>},
      OpDef{"ops.nn.Selu", "nn.selu", {"x"}, kFeatures, same_shape, unary<UnaryOp::selu>},
      OpDef{"ops.nn.Elu", "nn.elu", {"x", "alpha"}, kFeatures, same_shape, elu},
      OpDef{"ops.nn.LeakyRelu", nullptr, {"x", "negative_slope"}, {}, same_shape, leaky_relu},
      OpDef{nullptr, "nn.leaky_relu", {"x", "negative_slope"}, {{"features", "x"}, {"alpha", "negative_slope"}}, same_shape,
            leaky_relu},
      OpDef{"ops.nn.Gelu", nullptr, {"x", "approximate"}, {}, same_shape, gelu_keras},
      OpDef{nullptr, "nn.gelu", {"x", "approximate"}, kFeatures, same_shape, gelu_tf},
      OpDef{"activations.activations.ReLU", nullptr, {"x", "negative_slope", "max_value", "threshold"}, {}, same_shape,
            relu_activation},
      MAPPED("ops.numpy.Negative", "math.negative|__operators__.neg", negative, neg_d),
      MAPPED("ops.numpy.Sign", "math.sign|sign", sign, nullptr),
      MAPPED("ops.numpy.Floor", "math.floor|floor", floor_, nullptr),
      MAPPED("ops.numpy.Ceil", "math.ceil", ceil_, nullptr),
      OpDef{"ops.numpy.Round", "math.round|round", {"x", "decimals"}, {}, same_shape, round_op},
      MAPPED("ops.numpy.Sin", "math.sin", sin_, sin_d),
      MAPPED("ops.numpy.Cos", "math.cos", cos_, cos_d),
      MAPPED("ops.numpy.Log1p", "math.log1p", log1p_, log1p_d),
      MAPPED("ops.numpy.Expm1", "math.expm1", expm1_, expm1_d),
      MAPPED("ops.numpy.Reciprocal", "math.reciprocal", reciprocal, reciprocal_d),
      MAPPED("ops.math.Rsqrt", "math.rsqrt", rsqrt, rsqrt_d),
      MAPPED("ops.math.Erf", "math.erf", erf_, erf_d),
      MAPPED("ops.nn.LogSigmoid", "math.log_sigmoid", log_sigmoid, log_sigmoid_d),
      MAPPED("ops.numpy.LogicalNot", "math.logical_not", logical_not, nullptr),
      MAPPED("ops.numpy.Tan", "math.tan", tan_, tan_d),
      MAPPED("ops.numpy.Arcsin", "math.asin", asin_, asin_d),
      MAPPED("ops.numpy.Arccos", "math.acos", acos_, acos_d),
      MAPPED("ops.numpy.Arctan", "math.atan", atan_, atan_d),
      MAPPED("ops.numpy.Sinh", "math.sinh", sinh_, sinh_d),
      MAPPED("ops.numpy.Cosh", "math.cosh", cosh_, cosh_d),
      MAPPED("ops.numpy.Arcsinh", "math.asinh", asinh_, asinh_d),
      MAPPED("ops.numpy.Arccosh", "math.acosh", acosh_, acosh_d),
      MAPPED("ops.numpy.Arctanh", "math.atanh", atanh_, atanh_d),
      MAPPED("ops.numpy.Log2", nullptr, log2_, log2_d),
      MAPPED("ops.numpy.Log10", nullptr, log10_, log10_d),
      MAPPED("ops.numpy.Exp2", nullptr, exp2_, exp2_d),
      MAPPED("ops.numpy.Cbrt", nullptr, cbrt_, cbrt_d),
      MAPPED("ops.numpy.Trunc", nullptr, trunc_, nullptr),
      MAPPED("ops.numpy.Deg2rad", nullptr, deg2rad, deg2rad_d),
      MAPPED("ops.numpy.Rad2deg", nullptr, rad2deg, rad2deg_d),
      MAPPED("ops.numpy.Isnan", "math.is_nan", is_nan, nullptr),
      MAPPED("ops.numpy.Isinf", "math.is_inf", is_inf, nullptr),
      MAPPED("ops.numpy.Isfinite", "math.is_finite", is_finite, nullptr),
      MAPPED("ops.numpy.Signbit", nullptr, signbit_, nullptr),
      OpDef{"ops.core.StopGradient", "stop_gradient", {"x"}, {{"input", "x"}}, same_shape, stop_gradient},
      BINARY("ops.numpy.Add", "math.add|__operators__.add|add", add),
      BINARY("ops.numpy.Subtract", "math.subtract|subtract", subtract),
      BINARY("ops.numpy.Multiply", "math.multiply|multiply", multiply),
      BINARY("ops.numpy.Divide", "math.divide|divide", divide),
      BINARY("ops.numpy.TrueDivide", "math.truediv|truediv", divide),
      BINARY("ops.numpy.Maximum", "math.maximum|maximum", maximum),
      BINARY("ops.numpy.Minimum", "math.minimum|minimum", minimum),
      OpDef{"ops.numpy.Power", "math.pow|pow", {"x", "y"}, {}, broadcast_shape,
            [](const Args<Tensor>& a) { return ops::map_binary("power", a.value("x"), a.value("y"), power, power_da, power_db); }},
      OpDef{nullptr, "math.squared_difference", {"x", "y"}, {}, broadcast_shape,
            [](const Args<Tensor>& a) {
              return ops::map_binary("squared_difference", a.value("x"), a.value("y"), squared_difference, sqd_da, sqd_db);
            }},
      COMPARED("ops.numpy.FloorDivide", "math.floordiv|floordiv|compat.v1.floor_div", floor_divide),
      OpDef{"ops.numpy.Mod", "math.floormod|math.mod|mod", {"x", "y"}, {}, broadcast_shape,
            [](const Args<Tensor>& a) { return ops::map_binary("mod", a.value("x"), a.value("y"), mod, mod_da, mod_db); }},
      COMPARED("ops.numpy.Equal", "math.equal|equal|__operators__.eq", equal),
      COMPARED("ops.numpy.Greater", "math.greater|greater", greater),
      COMPARED("ops.numpy.GreaterEqual", "math.greater_equal|greater_equal", greater_equal),
      COMPARED("ops.numpy.Less", "math.less|less", less),
      COMPARED("ops.numpy.LessEqual", "math.less_equal|less_equal", less_equal),
      COMPARED("ops.numpy.LogicalXor", "math.logical_xor", logical_xor),
      OpDef{"ops.numpy.Arctan2", "math.atan2", {"x1", "x2"}, {{"y", "x1"}, {"x", "x2"}}, broadcast_shape2,
            [](const Args<Tensor>& a) {
              return ops::map_binary("arctan2", a.value("x1"), a.value("x2"), atan2_, atan2_da, atan2_db);
            }},
      OpDef{"ops.numpy.Hypot", nullptr, {"x1", "x2"}, {}, broadcast_shape2,
            [](const Args<Tensor>& a) {
              return ops::map_binary("hypot", a.value("x1"), a.value("x2"), hypot_, hypot_da, hypot_db);
            }},
      OpDef{"ops.numpy.Logaddexp", nullptr, {"x1", "x2"}, {}, broadcast_shape2,
            [](const Args<Tensor>& a) {
              return ops::map_binary("logaddexp", a.value("x1"), a.value("x2"), logaddexp, logaddexp_da, logaddexp_db);
            }},
      OpDef{"ops.numpy.Heaviside", nullptr, {"x1", "x2"}, {}, broadcast_shape2,
            [](const Args<Tensor>& a) {
              return ops::map_binary("heaviside", a.value("x1"), a.value("x2"), heaviside, nullptr, nullptr);
            }},
      OpDef{"ops.numpy.NotEqual", "math.not_equal|not_equal|__operators__.ne", {"x", "y"}, {}, broadcast_shape, not_equal},
      OpDef{"ops.numpy.LogicalOr", "math.logical_or", {"x", "y"}, {}, broadcast_shape, logical_or},
      OpDef{"ops.numpy.LogicalAnd", "math.logical_and", {"x", "y"}, {}, broadcast_shape, logical_and},
      OpDef{"ops.numpy.Where", "where|where_v2", {"condition", "x", "y"}, {}, where_shape, where},
      OpDef{"ops.numpy.Clip", "clip_by_value", {"x", "x_min", "x_max"},
            {{"t", "x"}, {"clip_value_min", "x_min"}, {"clip_value_max", "x_max"}}, clip_shape, clip},
      OpDef{"ops.numpy.ZerosLike", "zeros_like", {"x", "dtype"}, {{"input", "x"}}, same_shape,
            [](const Args<Tensor>& a) { return Tensor::zeros(a.value("x").shape()); }},
      OpDef{"ops.numpy.OnesLike", "ones_like", {"x", "dtype"}, {{"input", "x"}}, same_shape,
            [](const Args<Tensor>& a) { return ops::detail::filled(a.value("x").shape(), 1.f); }},
      OpDef{"ops.core.Cast", "cast|dtypes.cast", {"x", "dtype"}, {}, same_shape, cast},
      OpDef{"ops.core.ConvertToTensor", "convert_to_tensor", {"x", "dtype", "sparse", "ragged"}, {{"value", "x"}},
            same_shape, convert_to_tensor},
  };
}

}  // namespace kerascpp::layers::op_nodes
