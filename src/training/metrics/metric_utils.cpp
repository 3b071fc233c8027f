// n-d helpers of the metrics (see metric_utils.h).
#include "training/metrics/metric_utils.h"

#include <algorithm>
#include <limits>

namespace kerascpp::metrics::detail {

NdArray to_nd(const Tensor& t, const std::string& who, const char* what) {
  KCPP_CHECK(t.defined(), ValueError, who, ": ", what, " is undefined.");
  const Tensor d = t.dtype() == DType::float64 ? t : t.astype(DType::float64);
  NdArray a{t.shape(), std::vector<double>(d.data<double>(), d.data<double>() + d.size())};
  return a;
}

Tensor to_tensor(const NdArray& a) {
  Tensor t = Tensor::empty(a.shape);
  for (size_t i = 0; i < a.v.size(); ++i) t.data<float>()[i] = static_cast<float>(a.v[i]);
  return t;
}

void squeeze_or_expand(NdArray& x1, NdArray& x2, bool expand_rank_1) {
  const int r1 = x1.rank(), r2 = x2.rank();
  if (r1 == r2) return;
  if (r1 == r2 + 1 && x1.dim(-1) == 1) {
    if (r2 == 1 && expand_rank_1)
      x2.shape.push_back(1);
    else
      x1.shape.pop_back();
  }
  if (r2 == r1 + 1 && x2.dim(-1) == 1) {
    if (r1 == 1 && expand_rank_1)
      x1.shape.push_back(1);
    else
      x2.shape.pop_back();
  }
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& who) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 1; i <= out.size(); ++i) {
    const int64_t x = i <= a.size() ? a[a.size() - i] : 1, y = i <= b.size() ? b[b.size() - i] : 1;
    KCPP_CHECK(x == y || x == 1 || y == 1, ValueError, who, ": shapes ", shape_str(a), " and ", shape_str(b),
               " are incompatible.");
    out[out.size() - i] = x == 1 ? y : x;
  }
  return out;
}

NdArray broadcast_to(const NdArray& a, const Shape& shape, const std::string& who) {
  KCPP_CHECK(broadcast_shapes(a.shape, shape, who) == shape, ValueError, who, ": cannot broadcast shape ",
             shape_str(a.shape), " to ", shape_str(shape));
  if (a.shape == shape) return a;
  const size_t r = shape.size(), off = r - a.shape.size();
  std::vector<int64_t> stride(r, 0);  // a's stride per output dim, 0 where broadcast
  int64_t s = 1;
  for (size_t d = r; d-- > off;) {
    const int64_t n = a.shape[d - off];
    stride[d] = n == 1 ? 0 : s;
    s *= n;
  }
  NdArray out{shape, std::vector<double>(static_cast<size_t>(shape_size(shape)))};
  std::vector<int64_t> idx(r, 0);
  for (size_t i = 0; i < out.v.size(); ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < r; ++d) src += idx[d] * stride[d];
    out.v[i] = a.v[static_cast<size_t>(src)];
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

NdArray mean_from(const NdArray& a, int axis) {
  if (axis >= a.rank()) return a;
  NdArray out{Shape(a.shape.begin(), a.shape.begin() + axis), {}};
  int64_t group = 1;
  for (int d = axis; d < a.rank(); ++d) group *= a.shape[d];
  const int64_t n = shape_size(out.shape);
  out.v.assign(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n && group > 0; ++i) {
    double s = 0;
    for (int64_t j = 0; j < group; ++j) s += a.v[i * group + j];
    out.v[i] = s / static_cast<double>(group);
  }
  if (group == 0) out.v.assign(out.v.size(), std::numeric_limits<double>::quiet_NaN());
  return out;
}

NdArray argmax_last(const NdArray& a) {
  KCPP_CHECK(a.rank() >= 1 && a.dim(-1) > 0, ValueError, "argmax: expected a non-empty last axis. Received: shape=",
             shape_str(a.shape));
  const int64_t k = a.dim(-1);
  NdArray out{Shape(a.shape.begin(), a.shape.end() - 1), {}};
  const int64_t n = shape_size(out.shape);
  out.v.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    for (int64_t j = 1; j < k; ++j)
      if (a.v[i * k + j] > a.v[i * k + best]) best = j;
    out.v[i] = static_cast<double>(best);
  }
  return out;
}

void check_keys(const Json& config, const std::string& class_name, const std::vector<const char*>& options) {
  if (!config.is_object()) {
    KCPP_CHECK(config.is_null(), ValueError, class_name, ": a metric config must be a dict. Received: ", config.dump());
    return;
  }
  for (const auto& [key, value] : config.items()) {
    bool known = key == "name" || key == "dtype";
    for (const char* o : options) known = known || key == o;
    KCPP_CHECK(known, ValueError, class_name, ": unexpected config key '", key, "'. Received: config=", config.dump());
  }
}

std::string name_in(const Json& config, const std::string& fallback) {
  if (!config.is_object() || !config.contains("name") || config["name"].is_null()) return fallback;
  KCPP_CHECK(config["name"].is_string(), ValueError, "A metric name must be a string. Received: name=",
             config["name"].dump());
  return config["name"].get<std::string>();
}

double scalar_result(const Metric& m) {
  std::vector<double> values = m.result_array();
  KCPP_CHECK(!m.array_result() && values.size() == 1, ValueError, m.class_name(), " '", m.name(),
             "' reports an array of ", values.size(), " values: read it with result_array().");
  return values[0];
}

}  // namespace kerascpp::metrics::detail
