// Numeric op nodes: the further float math of keras.ops (fabs, fmod, fmax / fmin with numpy's NaN
// rules, ldexp, logaddexp2, sinc, i0, erfc, erfinv, divide_no_nan, nextafter) and of tf.math as
// tf_keras records it (xdivy, xlogy, xlog1py, lgamma, digamma, the modified Bessel functions i0 / i0e /
// i1 / i1e, ndtri, the *_no_nan functions). Special functions are computed in double and rounded once,
// so they agree with TensorFlow's float32 kernels to float32's round-off. Integer, bitwise and boolean
// ops are in numeric_ops_int.cpp.
#include <cmath>
#include <limits>

#include "layers/op_nodes/op_node.h"
#include "ops/grad_util.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {

std::vector<OpDef> numeric_int_ops();  // numeric_ops_int.cpp

namespace {
constexpr double kPi = 3.14159265358979323846;
constexpr double kTwoOverSqrtPi = 1.1283791670955126;  // erf'(0)

// ---- special functions in double

// Giles' single-precision approximation of erfinv(x), given w = -log((1 - x)(1 + x)) ("Approximating
// the erfinv function", 2010): a starting point for Newton's method below.
double giles_erfinv(double x, double w) {
  double p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      p = c + p * w;
  }
  return p * x;
}

// The y >= 0 with erfc(y) = q, for q in (0, 1]: Newton's method on log(erfc(y)) = log(q), which is
// nearly quadratic in y, so that the far tail (q down to 1e-45, float32's least p of ndtri) converges.
double erfcinv_upper(double q) {
  double y;
  if (q < 1e-2) {  // erfc(y) ~ exp(-y^2) / (y sqrt(pi))
    y = std::sqrt(-std::log(q));
    for (int i = 0; i < 3; ++i) y = std::sqrt(std::max(-std::log(q) - std::log(y * std::sqrt(kPi)), 1e-2));
  } else {
    y = giles_erfinv(1 - q, -std::log(q * (2 - q)));
  }
  const double lq = std::log(q);
  for (int i = 0; i < 100; ++i) {
    const double e = std::erfc(y);
    const double step = (std::log(e) - lq) * e / (-kTwoOverSqrtPi * std::exp(-y * y));
    y -= step;
    if (!(std::fabs(step) > 1e-15 * std::fabs(y))) break;
  }
  return y;
}

// The inverse of the standard normal CDF.
double ndtri_d(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0) return -std::numeric_limits<double>::infinity();
  if (p == 1) return std::numeric_limits<double>::infinity();
  return p <= 0.5 ? -std::sqrt(2.0) * erfcinv_upper(2 * p) : std::sqrt(2.0) * erfcinv_upper(2 * (1 - p));
}

// psi(x), the derivative of lgamma: reflection below 0, recurrence up to 10, then the asymptotic series.
double digamma_d(double x) {
  if (std::isnan(x) || x == -std::numeric_limits<double>::infinity())
    return std::numeric_limits<double>::quiet_NaN();
  if (x <= 0 && std::floor(x) == x) return std::numeric_limits<double>::quiet_NaN();  // the poles
  if (x < 0) return digamma_d(1 - x) - kPi / std::tan(kPi * x);
  double r = 0;
  for (; x < 10; x += 1) r -= 1 / x;
  const double z = 1 / (x * x);
  const double series =
      z *
      (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * 691.0 / 32760)))));
  return r + std::log(x) - 0.5 / x - series;
}

// psi'(x), the derivative of digamma (its gradient only).
double trigamma_d(double x) {
  if (x <= 0 && std::floor(x) == x) return std::numeric_limits<double>::quiet_NaN();
  if (x < 0) {
    const double s = std::sin(kPi * x);
    return -trigamma_d(1 - x) + kPi * kPi / (s * s);
  }
  double r = 0;
  for (; x < 10; x += 1) r += 1 / (x * x);
  const double z = 1 / x, z2 = z * z;
  return r + z + z2 / 2 +
         z * z2 * (1.0 / 6 - z2 * (1.0 / 30 - z2 * (1.0 / 42 - z2 * (1.0 / 30 - z2 * 5.0 / 66))));
}

// exp(-x) I_nu(x) for nu = 0 or 1 and x >= 0: the power series up to 30 (positive terms: no
// cancellation), the asymptotic expansion above.
double bessel_ie(int nu, double x) {
  if (std::isinf(x)) return 0;
  if (x <= 30) {
    const double h = x / 2;
    double term = nu ? h : 1, sum = term;
    for (int k = 1; k < 1000; ++k) {
      term *= h * h / (k * (k + nu));
      sum += term;
      if (term <= 1e-17 * sum) break;
    }
    return sum * std::exp(-x);
  }
  const double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 100; ++k) {
    const double next = -term * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k * x);
    if (std::fabs(next) >= std::fabs(term)) break;
    term = next;
    sum += term;
    if (std::fabs(term) <= 1e-17 * std::fabs(sum)) break;
  }
  return sum / std::sqrt(2 * kPi * x);
}
double i0e_d(double x) { return bessel_ie(0, std::fabs(x)); }
double i1e_d(double x) { return std::copysign(bessel_ie(1, std::fabs(x)), x); }
double i0_d(double x) {
  return std::fabs(x) > 800 ? std::numeric_limits<double>::infinity() : i0e_d(x) * std::exp(std::fabs(x));
}
double i1_d(double x) {
  return std::fabs(x) > 800 ? std::copysign(std::numeric_limits<double>::infinity(), x)
                            : i1e_d(x) * std::exp(std::fabs(x));
}

// ---- scalar functions and their derivatives d/dx given x and y = f(x)
float erfc_(float x) { return static_cast<float>(std::erfc(static_cast<double>(x))); }
float erfc_d(float x, float) {
  return static_cast<float>(-kTwoOverSqrtPi * std::exp(-static_cast<double>(x) * x));
}
// TensorFlow computes erfinv(x) as ndtri((x + 1) / 2) / sqrt(2) with (x + 1) / 2 rounded to float32:
// the same rounding here (so erfinv(1 - 2^-24) is inf and erfinv(1e-30) is 0, as TensorFlow's), then
// ndtri in double.
float erfinv_(float x) {
  if (std::isnan(x) || std::fabs(x) > 1) return std::numeric_limits<float>::quiet_NaN();
  const float p = (x + 1.f) * 0.5f;
  return static_cast<float>(ndtri_d(p) / std::sqrt(2.0));
}
float erfinv_dx(float, float y) {
  return static_cast<float>(std::sqrt(kPi) / 2 * std::exp(static_cast<double>(y) * y));
}
float ndtri_(float p) { return static_cast<float>(ndtri_d(p)); }
float ndtri_dx(float, float y) {
  return static_cast<float>(std::sqrt(2 * kPi) * std::exp(static_cast<double>(y) * y / 2));
}
float lgamma_(float x) { return static_cast<float>(std::lgamma(static_cast<double>(x))); }
float lgamma_dx(float x, float) { return static_cast<float>(digamma_d(x)); }
float digamma_(float x) { return static_cast<float>(digamma_d(x)); }
float digamma_dx(float x, float) { return static_cast<float>(trigamma_d(x)); }
float i0_(float x) { return static_cast<float>(i0_d(x)); }
float i0_dx(float x, float) { return static_cast<float>(i1_d(x)); }
float i1_(float x) { return static_cast<float>(i1_d(x)); }
float i1_dx(float x, float) { return x == 0 ? 0.5f : static_cast<float>(i0_d(x) - i1_d(x) / x); }
float i0e_(float x) { return static_cast<float>(i0e_d(x)); }
float i0e_dx(float x, float) {
  return static_cast<float>(i1e_d(x) - (x > 0 ? 1 : x < 0 ? -1 : 0) * i0e_d(x));
}
float i1e_(float x) { return static_cast<float>(i1e_d(x)); }
float i1e_dx(float x, float) {
  return x == 0 ? 0.5f : static_cast<float>(i0e_d(x) - i1e_d(x) * ((x > 0 ? 1.0 : -1.0) + 1.0 / x));
}
// sin(pi x) / (pi x) in float32 as Keras computes it (so sinc(1) is TensorFlow's -2.8e-8, not 0).
float sinc_(float x) {
  if (x == 0) return 1.f;
  const float px = x * static_cast<float>(kPi);
  return std::sin(px) / px;
}
float sinc_dx(float x, float y) {  // (cos(pi x) - sinc(x)) / x; 0 at 0 (TensorFlow's is NaN there)
  return x == 0 ? 0.f : static_cast<float>((std::cos(kPi * x) - y) / x);
}
float reciprocal_no_nan(float x) { return x == 0 ? 0.f : 1.f / x; }
float reciprocal_no_nan_dx(float x, float) { return x == 0 ? 0.f : -1.f / x / x; }

// Binary functions; d/da and d/db given (a, b) and y = f(a, b).
float fmod_(float a, float b) {  // Keras: sign(a) * floormod(|a|, |b|), C's fmod
  return std::fmod(a, b);
}
float fmod_da(float a, float, float) { return a == 0 ? 0.f : 1.f; }
float fmod_db(float a, float b, float) {
  if (a == 0) return 0.f;
  const float q = std::floor(std::fabs(a) / std::fabs(b));
  return (a < 0) != (b < 0) ? q : -q;  // -trunc(a / b)
}
// numpy's fmax / fmin: a NaN loses to a number. The gradient follows TensorFlow's maximum's
// (ties to the first argument) under Keras's NaN wheres.
float fmax_(float a, float b) { return std::isnan(a) ? b : std::isnan(b) ? a : (a >= b ? a : b); }
float fmax_da(float a, float b, float) { return !std::isnan(a) && (std::isnan(b) || a >= b) ? 1.f : 0.f; }
float fmax_db(float a, float b, float y) { return 1.f - fmax_da(a, b, y); }
float fmin_(float a, float b) { return std::isnan(a) ? b : std::isnan(b) ? a : (a <= b ? a : b); }
float fmin_da(float a, float b, float) { return !std::isnan(a) && (std::isnan(b) || a <= b) ? 1.f : 0.f; }
float fmin_db(float a, float b, float y) { return 1.f - fmin_da(a, b, y); }
// log2(2^a + 2^b) as Keras computes it in float32: max + log1p(2^-|a - b|) / ln 2; a + b where a - b
// is NaN (two equal infinities, or a NaN).
float logaddexp2_(float a, float b) {
  const float d = a - b, ln2 = 0.693147182f;
  if (std::isnan(d)) return a + b;
  return std::max(a, b) + std::log1p(std::exp(-std::fabs(d) * ln2)) / ln2;
}
float logaddexp2_da(float a, float, float y) { return std::exp2(a - y); }
float logaddexp2_db(float, float b, float y) { return std::exp2(b - y); }
float divide_no_nan(float a, float b) { return b == 0 ? 0.f : a / b; }
float divide_no_nan_da(float, float b, float) { return b == 0 ? 0.f : 1.f / b; }
float divide_no_nan_db(float a, float b, float) { return b == 0 ? 0.f : -a / b / b; }
float xdivy(float a, float b) { return a == 0 ? 0.f : a / b; }
float xdivy_da(float a, float b, float) { return a == 0 ? 0.f : 1.f / b; }
float xdivy_db(float a, float b, float) { return a == 0 ? 0.f : -a / (b * b); }
float xlogy(float a, float b) { return a == 0 ? 0.f : a * std::log(b); }
float xlogy_da(float a, float b, float) { return a == 0 ? 0.f : std::log(b); }
float xlogy_db(float a, float b, float) { return a == 0 ? 0.f : a / b; }
float xlog1py(float a, float b) { return a == 0 ? 0.f : a * std::log1p(b); }
float xlog1py_da(float a, float b, float) { return a == 0 ? 0.f : std::log1p(b); }
float xlog1py_db(float a, float b, float) { return a == 0 ? 0.f : a / (b + 1.f); }
float multiply_no_nan(float a, float b) { return b == 0 ? 0.f : a * b; }
float multiply_no_nan_da(float, float b, float) { return b; }
float multiply_no_nan_db(float a, float, float) { return a; }
// keras.ops.nextafter computes in float64 and rounds back (so that a float32 x1 comes back almost
// always unchanged); tf.math.nextafter on float32 steps one float32.
float nextafter_keras(float a, float b) {
  return static_cast<float>(std::nextafter(static_cast<double>(a), static_cast<double>(b)));
}
float nextafter_tf(float a, float b) { return std::nextafter(a, b); }

template <ops::ScalarFn f, ops::ScalarGrad df>
Tensor mapped(const Args<Tensor>& a) {
  return ops::map_unary(a.who().c_str(), a.value("x"), f, df);
}
template <ops::ScalarFn2 f, ops::ScalarGrad2 da, ops::ScalarGrad2 db>
Tensor mapped2(const Args<Tensor>& a) {
  return ops::map_binary(a.who().c_str(), a.value("x1"), a.value("x2"), f, da, db);
}
Shape broadcast_shape2(const Args<Shape>& a) { return ops::broadcast_shape(a.value("x1"), a.value("x2")); }

// ldexp(x1, x2) = x1 * 2^x2 as Keras computes it in float32 (2^x2 overflowing to inf, underflowing to
// 0), x1 itself where it is 0 or infinite. x2 is an integer tensor in Keras: a value that is not an
// integer is refused. Gradient to x1 only.
Tensor ldexp(const Args<Tensor>& a) {
  const Tensor x1 = a.value("x1"), x2 = a.value("x2");
  const Shape s = ops::broadcast_shape(x1.shape(), x2.shape());
  const Tensor A = ops::detail::broadcast_to(x1, s), B = ops::detail::broadcast_to(x2, s);
  Tensor y = Tensor::empty(s), scale = Tensor::empty(s);
  for (int64_t i = 0; i < y.size(); ++i) {
    const float v = A.data<float>()[i], e = B.data<float>()[i];
    KCPP_CHECK(e == std::trunc(e), ValueError, a.who(),
               ": argument 'x2' (the exponent, an integer tensor) holds ", e, ", which is not an integer");
    const float p = std::exp2(e);
    const bool keep = v == 0 || std::isinf(v);
    y.data<float>()[i] = keep ? v : v * p;
    scale.data<float>()[i] = keep ? 1.f : p;
  }
  if (ops::Recorder* r = ops::tape_for({&x1}))
    r->record("ldexp", {x1}, y, [x1, scale](const Tensor& dy) {
      return ops::Grads{ops::detail::sum_to(ops::detail::mul(dy, scale), x1.shape())};
    });
  return y;
}

Tensor absolute(const Args<Tensor>& a) { return ops::unary(ops::UnaryOp::abs, a.value("x")); }

#define MAPPED(keras, tf, f, df) \
  OpDef { keras, tf, {"x"}, {}, same_shape, mapped<f, df> }
#define MAPPED2(keras, tf, f, da, db) \
  OpDef { keras, tf, {"x1", "x2"}, kXY, broadcast_shape2, mapped2<f, da, db> }
// tf.math's binary functions call their tensors x and y.
const std::vector<std::pair<std::string, std::string>> kXY = {{"x", "x1"}, {"y", "x2"}};

}  // namespace

std::vector<OpDef> numeric_ops() {
  std::vector<OpDef> defs = {
      OpDef{"ops.numpy.Fabs", nullptr, {"x"}, {}, same_shape, absolute},
      // keras.ops.abs records Absolute (elementwise_ops.cpp); Abs is its subclass of the same math.
      OpDef{"ops.numpy.Abs", nullptr, {"x"}, {}, same_shape, absolute},
      MAPPED("ops.math.Erfc", "math.erfc|erfc", erfc_, erfc_d),
      MAPPED("ops.math.Erfinv", "math.erfinv|erfinv", erfinv_, erfinv_dx),
      MAPPED("ops.numpy.Sinc", nullptr, sinc_, sinc_dx),
      MAPPED("ops.numpy.I0", "math.bessel_i0|math.special.bessel_i0", i0_, i0_dx),
      MAPPED(nullptr, "math.bessel_i0e|math.special.bessel_i0e", i0e_, i0e_dx),
      MAPPED(nullptr, "math.bessel_i1|math.special.bessel_i1", i1_, i1_dx),
      MAPPED(nullptr, "math.bessel_i1e|math.special.bessel_i1e", i1e_, i1e_dx),
      MAPPED(nullptr, "math.lgamma|lgamma", lgamma_, lgamma_dx),
      MAPPED(nullptr, "math.digamma|digamma", digamma_, digamma_dx),
      MAPPED(nullptr, "math.ndtri", ndtri_, ndtri_dx),
      MAPPED(nullptr, "math.reciprocal_no_nan", reciprocal_no_nan, reciprocal_no_nan_dx),
      MAPPED2("ops.numpy.Fmod", nullptr, fmod_, fmod_da, fmod_db),
      MAPPED2("ops.numpy.Fmax", nullptr, fmax_, fmax_da, fmax_db),
      MAPPED2("ops.numpy.Fmin", nullptr, fmin_, fmin_da, fmin_db),
      MAPPED2("ops.numpy.Logaddexp2", nullptr, logaddexp2_, logaddexp2_da, logaddexp2_db),
      MAPPED2("ops.numpy.DivideNoNan", "math.divide_no_nan|div_no_nan", divide_no_nan, divide_no_nan_da,
              divide_no_nan_db),
      MAPPED2(nullptr, "math.xdivy", xdivy, xdivy_da, xdivy_db),
      MAPPED2(nullptr, "math.xlogy", xlogy, xlogy_da, xlogy_db),
      MAPPED2(nullptr, "math.xlog1py", xlog1py, xlog1py_da, xlog1py_db),
      MAPPED2(nullptr, "math.multiply_no_nan", multiply_no_nan, multiply_no_nan_da, multiply_no_nan_db),
      MAPPED2("ops.numpy.Nextafter", nullptr, nextafter_keras, nullptr, nullptr),
      MAPPED2(nullptr, "math.nextafter", nextafter_tf, nullptr, nullptr),
      OpDef{"ops.numpy.Ldexp", nullptr, {"x1", "x2"}, {}, broadcast_shape2, ldexp},
  };
  for (OpDef& d : numeric_int_ops()) defs.push_back(std::move(d));
  return defs;
}

}  // namespace kerascpp::layers::op_nodes
