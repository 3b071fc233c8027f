// Helpers of the layer tests: seeded random tensors and the finite-difference check of a layer's
// weight gradients.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kerascpp/autodiff.h"
#include "kerascpp/layer.h"

namespace kerascpp {

inline Tensor random(std::mt19937& g, const Shape& shape, float scale = 0.5f) {
  std::normal_distribution<float> n(0.f, scale);
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = n(g);
  return t;
}

// Central differences of sum(y * p) for every weight element, in double, against the tape's gradient.
// Relative error over a floor of 1e-3 (the float32 noise of these differences is ~1e-5), so a wrong
// sign scores 2.
inline double worst_weight_gradient_error(const Layer& l, const std::vector<Tensor>& in, const CallContext& ctx,
                                   std::string* where) {
  std::mt19937 g(5);
  const Tensor p = random(g, l.call(in, ctx)[0].shape(), 1.f);
  auto objective = [&] {
    const Tensor y = l.call(in, ctx)[0];
    double s = 0;
    for (int64_t i = 0; i < y.size(); ++i) s += double(y.data<float>()[i]) * p.data<float>()[i];
    return s;
  };
  std::vector<Tensor> analytic;
  {
    GradientTape tape;
    tape.watch(l.weights());
    const Tensor y = l.call(in, ctx)[0];
    analytic = tape.gradient(y, l.weights(), p);
  }
  double worst = 0;
  const double eps = 1e-2;
  for (size_t k = 0; k < l.weights().size(); ++k) {
    const VariablePtr v = l.weights()[k];
    float* w = v->value().data<float>();
    // Each change in place is announced (mark_updated), so that layers caching packed weights see it.
    auto set = [&](int64_t i, float value) {
      w[i] = value;
      v->mark_updated();
    };
    for (int64_t i = 0; i < v->value().size(); ++i) {
      const float keep = w[i];
      set(i, keep + static_cast<float>(eps));
      const double plus = objective();
      set(i, keep - static_cast<float>(eps));
      const double minus = objective();
      set(i, keep);
      const double numeric = (plus - minus) / (2 * eps);
      const double a = analytic[k].defined() ? analytic[k].data<float>()[i] : 0.0;
      const double err = std::fabs(a - numeric) / std::max({std::fabs(a), std::fabs(numeric), 1e-3});
      if (err > worst) {
        worst = err;
        *where = l.weights()[k]->path() + "[" + std::to_string(i) + "] analytic " + std::to_string(a) + " numeric " +
                 std::to_string(numeric);
      }
    }
  }
  return worst;
}

}  // namespace kerascpp
