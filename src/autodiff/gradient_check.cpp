// check_gradients: central finite differences against the tape, for op, layer and model tests.
#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "kerascpp/autodiff.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp {

namespace {
// sum(y * projection) in double, outside any tape; with abs, sum(|y * projection|).
double project(const Tensor& y, const Tensor& projection, bool abs = false) {
  double s = 0;
  const float* a = y.data<float>();
  const float* p = projection.data<float>();
  for (int64_t i = 0; i < y.size(); ++i) {
    const double t = static_cast<double>(a[i]) * p[i];
    s += abs ? std::fabs(t) : t;
  }
  return s;
}

// How far float32 rounding alone can move a central difference: each of f's outputs is off by a
// few ulps (eps = 2^-24), so sum(y * projection) is off by up to about 8 eps sum|y * projection| in
// each of the two evaluations, divided by the step. Differences 100x that size are checked at the
// 1e-2 the tests use; smaller gradients than this floor cannot be told from rounding noise.
constexpr double kNoiseUlps = 8.0;
constexpr double kFloorOverNoise = 100.0;
}  // namespace

GradientCheck check_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                              const std::vector<Tensor>& inputs, double epsilon) {
  std::vector<Tensor> xs;
  for (const Tensor& t : inputs) {
    KCPP_CHECK(t.defined() && t.dtype() == DType::float32, ValueError, "check_gradients: inputs must be float32");
    xs.push_back(t.copy());
  }
  // The analytic gradient of sum(f(x) * projection) from the tape.
  Tensor projection;
  std::vector<Tensor> analytic;
  {
    GradientTape tape;
    for (const Tensor& x : xs) tape.watch(x);
    Tensor y = f(xs);
    KCPP_CHECK(y.defined() && y.dtype() == DType::float32, ValueError, "check_gradients: f must return float32");
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    projection = Tensor::empty(y.shape());
    for (int64_t i = 0; i < projection.size(); ++i) projection.data<float>()[i] = u(rng);
    analytic = tape.gradient(y, xs, projection);
  }
  GradientCheck result;
  ops::NoRecord pause;
  const double magnitude = project(f(xs), projection, /*abs=*/true);
  for (size_t k = 0; k < xs.size(); ++k) {
    float* p = xs[k].data<float>();
    for (int64_t i = 0; i < xs[k].size(); ++i) {
      const float saved = p[i];
      p[i] = static_cast<float>(saved + epsilon);
      const double plus = project(f(xs), projection);
      p[i] = static_cast<float>(saved - epsilon);
      const double minus = project(f(xs), projection);
      p[i] = saved;
      // The step actually taken in float32, not the nominal one.
      const double step = static_cast<double>(static_cast<float>(saved + epsilon)) -
                          static_cast<double>(static_cast<float>(saved - epsilon));
      const double numeric = (plus - minus) / step;
      const double a = analytic[k].defined() ? analytic[k].data<float>()[i] : 0.0;
      const double noise = kNoiseUlps * std::ldexp(1.0, -24) * magnitude / step;
      const double err = std::abs(a - numeric) / std::max({std::abs(a), std::abs(numeric), kFloorOverNoise * noise});
      if (!(err <= result.max_error)) {  // also catches NaN
        result.max_error = std::isnan(err) ? INFINITY : err;
        std::ostringstream os;
        os << "input " << k << " element " << i << ": analytic " << a << " numeric " << numeric;
        result.worst = os.str();
      }
    }
  }
  return result;
}

}  // namespace kerascpp
