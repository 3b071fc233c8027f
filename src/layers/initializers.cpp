#include "layers/initializers.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "core/naming.h"
#include "layers/config_utils.h"

namespace kerascpp::layers {
namespace {

double number(const Json& c, const char* key, double fallback, const std::string& who) {
  if (!c.contains(key) || c[key].is_null()) return fallback;
  KCPP_CHECK(c[key].is_number(), ValueError, "The initializer of ", who, " needs a number for `", key,
             "`. Received: ", c[key].dump());
  return c[key].get<double>();
}

std::vector<int> axes(const Json& c, const char* key) {
  std::vector<int> out;
  if (c.contains(key) && c[key].is_array())
    for (const Json& a : c[key]) out.push_back(a.get<int>());
  return out;
}

// The canonical class of a name Keras accepts: the class name, its snake_case name, or an alias.
std::string canonical(const std::string& name) {
  static const std::vector<std::string> classes = {
      "Constant", "Identity", "Ones", "Zeros", "GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform",
      "LecunNormal", "LecunUniform", "Orthogonal", "RandomNormal", "RandomUniform", "TruncatedNormal",
      "VarianceScaling"};
  static const std::map<std::string, std::string> aliases = {
      {"IdentityInitializer", "Identity"}, {"OrthogonalInitializer", "Orthogonal"}, {"normal", "RandomNormal"},
      {"uniform", "RandomUniform"}, {"one", "Ones"}, {"zero", "Zeros"}};
  for (const std::string& c : classes)
    if (name == c || name == to_snake_case(c)) return c;
  auto it = aliases.find(name);
  return it == aliases.end() ? std::string() : it->second;
}

// Keras's truncated normal: values beyond 2 stddev of the mean drawn again.
double truncated(std::normal_distribution<double>& n, std::mt19937_64& rng) {
  for (;;) {
    const double z = n(rng);
    if (std::fabs(z) <= 2.0) return z;
  }
}

}  // namespace

std::pair<double, double> compute_fans(const Shape& shape, const std::vector<int>& input_axes,
                                       const std::vector<int>& output_axes) {
  const int rank = static_cast<int>(shape.size());
  auto dim = [&](int a) { return static_cast<double>(shape.at(a < 0 ? a + rank : a)); };
  if (!input_axes.empty() && !output_axes.empty()) {
    double in = 1, out = 1;
    for (int a : input_axes) in *= dim(a);
    for (int a : output_axes) out *= dim(a);
    return {in, out};
  }
  if (rank < 1) return {1, 1};
  if (rank == 1) return {dim(0), dim(0)};
  double receptive = 1;
  for (int a = 0; a + 2 < rank; ++a) receptive *= dim(a);
  return {dim(rank - 2) * receptive, dim(rank - 1) * receptive};
}

Initializer Initializer::from_config(const Json& j, const std::string& who) {
  Initializer init;
  init.who_ = who;
  const std::pair<std::string, Json> object = keras_object(j);
  const std::string& name = object.first;  // not a structured binding: lambdas capture it (clang < 16)
  const Json& c = object.second;
  const std::string cls = canonical(name);
  KCPP_CHECK(!cls.empty(), ValueError, "Could not interpret initializer identifier: ", j.dump().substr(0, 200), " (",
             who, ")");
  if (c.contains("seed") && c["seed"].is_number_integer()) init.seeded_ = true, init.seed_ = c["seed"].get<uint64_t>();
  auto scaling = [&](double scale, const char* mode, const char* distribution) {
    init.kind_ = Kind::variance_scaling;
    init.scale_ = scale, init.mode_ = mode, init.distribution_ = distribution;
  };
  if (cls == "Zeros" || cls == "Ones" || cls == "Constant") {
    init.kind_ = Kind::constant;
    init.a_ = cls == "Ones" ? 1.0 : cls == "Zeros" ? 0.0 : number(c, "value", 0.0, who);
  } else if (cls == "Identity") {
    init.kind_ = Kind::identity, init.a_ = number(c, "gain", 1.0, who);
  } else if (cls == "RandomNormal" || cls == "TruncatedNormal") {
    init.kind_ = cls == "RandomNormal" ? Kind::normal : Kind::truncated_normal;
    init.a_ = number(c, "mean", 0.0, who), init.b_ = number(c, "stddev", 0.05, who);
    KCPP_CHECK(init.b_ >= 0, ValueError, "The ", cls, " initializer of ", who, " needs stddev >= 0. Received: stddev=",
               init.b_);
    if (init.b_ == 0) init.kind_ = Kind::constant;  // every draw is the mean
  } else if (cls == "RandomUniform") {
    init.kind_ = Kind::uniform, init.a_ = number(c, "minval", -0.05, who), init.b_ = number(c, "maxval", 0.05, who);
    KCPP_CHECK(init.a_ <= init.b_, ValueError, "The RandomUniform initializer of ", who, " needs minval <= maxval. "
               "Received: minval=", init.a_, ", maxval=", init.b_);
    if (init.a_ == init.b_) init.kind_ = Kind::constant;
  } else if (cls == "Orthogonal") {
    init.kind_ = Kind::orthogonal, init.a_ = number(c, "gain", 1.0, who);
  } else if (cls == "GlorotNormal") {
    scaling(1.0, "fan_avg", "truncated_normal");
  } else if (cls == "GlorotUniform") {
    scaling(1.0, "fan_avg", "uniform");
  } else if (cls == "HeNormal") {
    scaling(2.0, "fan_in", "truncated_normal");
  } else if (cls == "HeUniform") {
    scaling(2.0, "fan_in", "uniform");
  } else if (cls == "LecunNormal") {
    scaling(1.0, "fan_in", "truncated_normal");
  } else if (cls == "LecunUniform") {
    scaling(1.0, "fan_in", "uniform");
  } else {  // VarianceScaling
    auto text = [&](const char* key, const char* fallback) {  // Keras lowercases both
      std::string v = c.contains(key) && c[key].is_string() ? c[key].get<std::string>() : fallback;
      std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return std::tolower(ch); });
      return v;
    };
    std::string distribution = text("distribution", "truncated_normal");
    if (distribution == "normal") distribution = "truncated_normal";  // tf_keras's name for it
    const std::string mode = text("mode", "fan_in");
    KCPP_CHECK(mode == "fan_in" || mode == "fan_out" || mode == "fan_avg", ValueError, "Invalid `mode` argument of the "
               "VarianceScaling initializer of ", who, ": expected one of {\"fan_in\", \"fan_out\", \"fan_avg\"}. Received: mode=",
               mode);
    KCPP_CHECK(distribution == "truncated_normal" || distribution == "untruncated_normal" || distribution == "uniform",
               ValueError, "Invalid `distribution` argument of the VarianceScaling initializer of ", who, ": expected one of "
               "{\"uniform\", \"truncated_normal\", \"untruncated_normal\"}. Received: distribution=", distribution);
    const double scale = number(c, "scale", 1.0, who);
    KCPP_CHECK(scale > 0, ValueError, "Argument `scale` of the VarianceScaling initializer of ", who,
               " must be positive. Received: scale=", scale);
    init.kind_ = Kind::variance_scaling, init.scale_ = scale, init.mode_ = mode, init.distribution_ = distribution;
  }
  if (init.kind_ == Kind::variance_scaling) init.input_axes_ = axes(c, "input_axes"), init.output_axes_ = axes(c, "output_axes");
  return init;
}

void Initializer::fill(Tensor& t, std::mt19937_64& caller_rng) const {
  KCPP_CHECK(t.dtype() == DType::float32, ValueError, "The initializer of ", who_, " fills float32 weights. Received: ",
             dtype_name(t.dtype()));
  std::mt19937_64 own(seed_);
  std::mt19937_64& rng = seeded_ ? own : caller_rng;
  float* p = t.data<float>();
  const int64_t n = t.size();
  auto draw = [&](auto sample) {  // every element from one draw of the distribution
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(sample());
  };
  const Shape& shape = t.shape();
  switch (kind_) {
    case Kind::constant:
      std::fill(p, p + n, static_cast<float>(a_));
      return;
    case Kind::identity: {
      KCPP_CHECK(shape.size() == 2, ValueError, "Identity matrix initializer can only be used for 2D matrices (", who_,
                 "). Received: shape=", shape_str(shape));
      std::fill(p, p + n, 0.f);
      for (int64_t i = 0; i < std::min(shape[0], shape[1]); ++i) p[i * shape[1] + i] = static_cast<float>(a_);
      return;
    }
    case Kind::normal: {
      std::normal_distribution<double> d(a_, b_);
      return draw([&] { return d(rng); });
    }
    case Kind::truncated_normal: {
      std::normal_distribution<double> d(0.0, 1.0);
      return draw([&] { return a_ + b_ * truncated(d, rng); });
    }
    case Kind::uniform: {
      std::uniform_real_distribution<double> d(a_, b_);
      return draw([&] { return d(rng); });
    }
    case Kind::variance_scaling: {
      const auto [fan_in, fan_out] = compute_fans(shape, input_axes_, output_axes_);
      const double fan = mode_ == "fan_in" ? fan_in : mode_ == "fan_out" ? fan_out : (fan_in + fan_out) / 2.0;
      const double scale = scale_ / std::max(1.0, fan);
      std::normal_distribution<double> normal(0.0, 1.0);
      if (distribution_ == "truncated_normal") {
        const double stddev = std::sqrt(scale) / 0.87962566103423978;
        return draw([&] { return stddev * truncated(normal, rng); });
      } else if (distribution_ == "untruncated_normal") {
        const double stddev = std::sqrt(scale);
        return draw([&] { return stddev * normal(rng); });
      } else {
        const double limit = std::sqrt(3.0 * scale);
        std::uniform_real_distribution<double> u(-limit, limit);
        return draw([&] { return u(rng); });
      }
    }
    case Kind::orthogonal: {
      KCPP_CHECK(shape.size() >= 2, ValueError, "The tensor to initialize must be at least two-dimensional (", who_,
                 "). Received: shape=", shape_str(shape));
      const int64_t cols = shape.back(), rows = n / std::max<int64_t>(1, cols);
      const int64_t tall = std::max(rows, cols), narrow = std::min(rows, cols);
      // Q of a (tall, narrow) normal matrix by modified Gram-Schmidt, each column's sign that of R's
      // diagonal made positive (Keras: q *= sign(diag(r))), in double.
      std::normal_distribution<double> normal(0.0, 1.0);
      std::vector<double> q(tall * narrow);  // column-major: column j at q[j * tall]
      for (double& v : q) v = normal(rng);
      for (int64_t j = 0; j < narrow; ++j) {
        double* cj = q.data() + j * tall;
        for (int64_t k = 0; k < j; ++k) {
          const double* ck = q.data() + k * tall;
          double dot = 0;
          for (int64_t i = 0; i < tall; ++i) dot += ck[i] * cj[i];
          for (int64_t i = 0; i < tall; ++i) cj[i] -= dot * ck[i];
        }
        double norm = 0;
        for (int64_t i = 0; i < tall; ++i) norm += cj[i] * cj[i];
        norm = std::sqrt(norm);
        for (int64_t i = 0; i < tall; ++i) cj[i] /= norm > 0 ? norm : 1.0;
      }
      // (rows, cols): Q itself when rows >= cols, else its transpose.
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          p[r * cols + c] = static_cast<float>(a_ * (rows >= cols ? q[c * tall + r] : q[r * tall + c]));
      return;
    }
  }
}

}  // namespace kerascpp::layers
