#include "layers/constraints.h"

#include <algorithm>
#include <cmath>

#include "core/naming.h"
#include "layers/config_utils.h"

namespace kerascpp::layers {

Constraint Constraint::from_config(const Json& j, const std::string& who) {
  Constraint c;
  if (j.is_null()) return c;
  const std::pair<std::string, Json> object = keras_object(j);
  const std::string& name = object.first;  // not a structured binding: lambdas capture it (clang < 16)
  const Json& cfg = object.second;
  auto is = [&](const char* cls, const char* keras2_alias) {
    return name == cls || name == to_snake_case(cls) || name == keras2_alias;
  };
  auto number = [&](const char* key, double fallback) {
    return cfg.contains(key) && cfg[key].is_number() ? cfg[key].get<double>() : fallback;
  };
  if (cfg.contains("axis")) {
    c.axes_.clear();  // null: every axis (one norm over the whole weight)
    if (cfg["axis"].is_array()) {
      for (const Json& a : cfg["axis"]) c.axes_.push_back(a.get<int>());
    } else if (!cfg["axis"].is_null()) {
      c.axes_.push_back(cfg["axis"].get<int>());
    }
  }
  if (name == "Constraint") {  // Keras's base class: the identity
    return c;
  } else if (is("MaxNorm", "maxnorm")) {
    c.kind_ = Kind::max_norm, c.min_value_ = 0, c.max_value_ = number("max_value", 2.0), c.rate_ = 1;
  } else if (is("MinMaxNorm", "min_max_norm")) {
    c.kind_ = Kind::min_max_norm, c.min_value_ = number("min_value", 0.0), c.max_value_ = number("max_value", 1.0);
    c.rate_ = number("rate", 1.0);
  } else if (is("NonNeg", "nonneg")) {
    c.kind_ = Kind::non_neg;
  } else if (is("UnitNorm", "unitnorm")) {
    c.kind_ = Kind::unit_norm;
  } else {
    KCPP_THROW(ValueError, "Could not interpret constraint identifier: ", j.dump().substr(0, 200), " (", who, ")");
  }
  return c;
}

Tensor Constraint::apply(const Tensor& w) const {
  Tensor out = w.copy();
  float* p = out.data<float>();
  const int64_t n = out.size();
  if (kind_ == Kind::none) return out;
  if (kind_ == Kind::non_neg) {
    for (int64_t i = 0; i < n; ++i) p[i] = std::max(p[i], 0.f);
    return out;
  }
  // Norms over the axes (keepdims): each element's group is its index with those coordinates zeroed.
  const Shape& s = out.shape();
  const int rank = static_cast<int>(s.size());
  std::vector<bool> reduced(rank, axes_.empty());  // no axes: all of them
  for (int a : axes_) {
    const int ax = a < 0 ? a + rank : a;
    KCPP_CHECK(ax >= 0 && ax < rank, ValueError, "A constraint's axis ", a, " is out of range for a weight of shape ",
               shape_str(s));
    reduced[ax] = true;
  }
  std::vector<int64_t> group(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, g = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t coord = rest % s[d];
      rest /= s[d];
      if (!reduced[d]) g += coord * stride;
      stride *= s[d];
    }
    group[i] = g;
  }
  std::vector<double> sq(n, 0.0);  // indexed by group (groups are flat indices < n)
  for (int64_t i = 0; i < n; ++i) sq[group[i]] += double(p[i]) * p[i];
  constexpr double kEpsilon = 1e-7;  // keras.backend.epsilon()
  for (int64_t i = 0; i < n; ++i) {
    const double norm = std::sqrt(sq[group[i]]);
    double desired = 1.0;  // unit_norm: w / (eps + norm)
    if (kind_ != Kind::unit_norm)
      desired = rate_ * std::clamp(norm, min_value_, max_value_) + (1.0 - rate_) * norm;
    p[i] = static_cast<float>(p[i] * (desired / (kEpsilon + norm)));
  }
  return out;
}

}  // namespace kerascpp::layers
