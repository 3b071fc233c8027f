// Sorting op nodes: keras.ops sort / argsort / top_k / in_top_k, the order statistics median /
// percentile / quantile and their NaN-skipping forms, searchsorted and digitize; tf_keras's tf.sort /
// tf.argsort / tf.math.top_k / tf.math.in_top_k / tf.searchsorted.
//
// Values that are picked from the input (sorted values, top k, percentiles) are one op each that
// records y[j] = wa[j] x[a[j]] + wb[j] x[b[j]] and scatters dy back to the picked positions with those
// weights, as TensorFlow's gradients of sort / top_k / gather do. Indices, memberships and bins are
// integers carried as float32: no gradient.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "layers/op_nodes/op_node.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
namespace {

// Ascending order with NaN last (a strict weak order, as sorting needs).
bool less(float a, float b) { return !std::isnan(a) && (std::isnan(b) || a < b); }

// The flat indices of a tensor of shape s, grouped: for each position of the kept axes (row-major),
// the positions along the reduced axes (in the order given, row-major). count groups of `size`.
struct Groups {
  int64_t count = 1, size = 1;
  std::vector<int64_t> at;  // count * size
};
Groups grouped(const Shape& s, const std::vector<int>& reduced) {
  std::vector<int64_t> stride(s.size(), 1);
  for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) stride[d] = stride[d + 1] * s[d + 1];
  std::vector<int> kept;
  for (int d = 0; d < static_cast<int>(s.size()); ++d)
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  auto offsets = [&](const std::vector<int>& dims) {
    std::vector<int64_t> o{0};
    for (int d : dims) {
      std::vector<int64_t> n;
      for (int64_t b : o)
        for (int64_t i = 0; i < s[d]; ++i) n.push_back(b + i * stride[d]);
      o = std::move(n);
    }
    return o;
  };
  const std::vector<int64_t> ko = offsets(kept), ro = offsets(reduced);
  Groups g{static_cast<int64_t>(ko.size()), static_cast<int64_t>(ro.size()), {}};
  g.at.reserve(ko.size() * ro.size());
  for (int64_t k : ko)
    for (int64_t r : ro) g.at.push_back(k + r);
  return g;
}

// y[j] = wa[j] x[a[j]] (+ wb[j] x[b[j]] where b is given); a[j] < 0: y[j] is NaN (no gradient).
struct Picks {
  std::vector<int64_t> a, b;
  std::vector<float> wa, wb;
};
Tensor picked(const char* op, const Tensor& x, const Shape& shape, Picks p) {
  Tensor y = Tensor::empty(shape);
  const float* xs = x.data<float>();
  float* ys = y.data<float>();
  const bool two = !p.b.empty();
  for (size_t j = 0; j < p.a.size(); ++j) {
    if (p.a[j] < 0) {
      ys[j] = std::nanf("");
    } else if (two) {
      const float hi = xs[p.a[j]] * p.wa[j], lo = xs[p.b[j]] * p.wb[j];  // TF: y_hi (1 - f) + y_lo f
      ys[j] = hi + lo;
    } else {
      ys[j] = xs[p.a[j]] * p.wa[j];
    }
  }
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record(op, {x}, y, [p = std::move(p), xshape = x.shape(), two](const Tensor& dy) {
      Tensor dx = Tensor::zeros(xshape);
      float* d = dx.data<float>();
      const float* g = dy.data<float>();
      for (size_t j = 0; j < p.a.size(); ++j) {
        if (p.a[j] < 0) continue;
        d[p.a[j]] += p.wa[j] * g[j];
        if (two) d[p.b[j]] += p.wb[j] * g[j];
      }
      return ops::Grads{dx};
    });
  return y;
}

// The stable order of one group's values, ascending or descending (TensorFlow's sort and top_k keep
// equal values in index order both ways).
std::vector<int64_t> order_of(const float* x, const int64_t* at, int64_t n, bool descending) {
  std::vector<int64_t> o(n);
  std::iota(o.begin(), o.end(), 0);
  std::stable_sort(o.begin(), o.end(), [&](int64_t i, int64_t j) {
    return descending ? less(x[at[j]], x[at[i]]) : less(x[at[i]], x[at[j]]);
  });
  return o;
}

// ---- sort / argsort along one axis (None: the flattened tensor); tf's direction.
template <class T>
int sort_axis(const Args<T>& a, int rank) {
  return a.given("axis") && !a.has("axis") ? -1 : axis_in(a, "axis", a.get("axis", -1), rank);
}
template <class T>
bool descending(const Args<T>& a) {
  const std::string d = a.get("direction", std::string("ASCENDING"));
  if (d != "ASCENDING" && d != "DESCENDING") a.fail("direction", "neither 'ASCENDING' nor 'DESCENDING'");
  return d == "DESCENDING";
}
Shape sort_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  descending(a);
  if (sort_axis(a, static_cast<int>(x.size())) == -1) {
    int64_t n = 1;
    for (int64_t d : x) n = d < 0 || n < 0 ? -1 : n * d;
    return {n};
  }
  return x;
}
template <bool indices>
Tensor sort(const Args<Tensor>& a) {
  Tensor x = a.value("x");
  if (x.rank() == 0) a.fail("x", "not a tensor of rank 1 or more");
  int axis = sort_axis(a, x.rank());
  if (axis == -1) x = x.reshape({x.size()}), axis = 0;
  const Groups g = grouped(x.shape(), {axis});
  const bool down = descending(a);
  if (indices) {
    Tensor y = Tensor::empty(x.shape());
    for (int64_t k = 0; k < g.count; ++k) {
      const int64_t* at = g.at.data() + k * g.size;
      const std::vector<int64_t> o = order_of(x.data<float>(), at, g.size, down);
      for (int64_t i = 0; i < g.size; ++i) y.data<float>()[at[i]] = static_cast<float>(o[i]);
    }
    return y;
  }
  Picks p{std::vector<int64_t>(x.size()), {}, std::vector<float>(x.size(), 1.f), {}};
  for (int64_t k = 0; k < g.count; ++k) {
    const int64_t* at = g.at.data() + k * g.size;
    const std::vector<int64_t> o = order_of(x.data<float>(), at, g.size, down);
    for (int64_t i = 0; i < g.size; ++i) p.a[at[i]] = at[o[i]];
  }
  return picked("sort", x, x.shape(), std::move(p));
}

// ---- top_k along the last axis: (values, indices), largest first.
template <class T>
int64_t top_k_count(const Args<T>& a, int64_t n) {
  const int64_t k = a.get("k", int64_t{1});
  if (k < 0 || (n >= 0 && k > n))
    a.fail("k", "not in [0, " + std::to_string(n) + "], the size of the input's last axis");
  // Unsorted, TensorFlow gives the k values in the order its heap leaves them.
  if (!a.get("sorted", true) && k > 1)
    a.fail("sorted",
           "not supported by kerascpp as false with k > 1: TensorFlow then returns the top k in the order "
           "its heap "
           "leaves them, which is implementation-defined");
  return k;
}
std::vector<Shape> top_k_shapes(const Args<Shape>& a) {
  Shape s = a.value("x");
  expect_rank(a, s, 1, "x");
  s.back() = top_k_count(a, s.back());
  return {s, s};
}
std::vector<Tensor> top_k(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (x.rank() == 0) a.fail("x", "not a tensor of rank 1 or more");
  const int64_t n = x.dim(-1), k = top_k_count(a, n), rows = n == 0 ? 0 : x.size() / n;
  Shape s = x.shape();
  s.back() = k;
  Tensor idx = Tensor::empty(s);
  Picks p{std::vector<int64_t>(rows * k), {}, std::vector<float>(rows * k, 1.f), {}};
  std::vector<int64_t> at(n);
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(at.begin(), at.end(), r * n);
    const std::vector<int64_t> o = order_of(x.data<float>(), at.data(), n, true);
    for (int64_t j = 0; j < k; ++j)
      p.a[r * k + j] = r * n + o[j], idx.data<float>()[r * k + j] = static_cast<float>(o[j]);
  }
  return {picked("top_k", x, s, std::move(p)), idx};
}

// ---- in_top_k: whether predictions[i, targets[i]] is among the k largest of its row (ties at the
// boundary count as in; an index outside the row or a non-finite prediction: false), as tf.math.in_top_k.
template <class T>
void check_in_top_k(const Args<T>& a, const Shape& t, const Shape& p) {
  if (p.size() != 2) a.fail("predictions", "not of rank 2 (batch, classes)");
  if (t.size() != 1) a.fail("targets", "not of rank 1 (batch,)");
  if (t[0] >= 0 && p[0] >= 0 && t[0] != p[0]) a.fail("targets", "not as long as `predictions` has rows");
}
Shape in_top_k_shape(const Args<Shape>& a) {
  check_in_top_k(a, a.value("targets"), a.value("predictions"));
  return a.value("targets");
}
Tensor in_top_k(const Args<Tensor>& a) {
  const Tensor t = a.value("targets"), p = a.value("predictions");
  check_in_top_k(a, t.shape(), p.shape());
  const int64_t k = a.get("k", int64_t{1}), rows = p.dim(0), n = p.dim(1);
  Tensor y = Tensor::empty(t.shape());
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = p.data<float>() + r * n;
    const float target = t.data<float>()[r];
    const int64_t c = static_cast<int64_t>(target);
    bool unknown = !(target >= 0 && c < n) || !std::isfinite(row[c]);
    int64_t above = 0;
    for (int64_t i = 0; i < n && !unknown; ++i) {
      if (!std::isfinite(row[i]))
        unknown = true;
      else if (row[i] > row[c])
        ++above;
    }
    y.data<float>()[r] = !unknown && above < k ? 1.f : 0.f;
  }
  return y;
}

// ---- median / percentile / quantile (and the nan* forms, which leave NaNs out): as Keras's
// TensorFlow backend (tfp.stats.percentile): q's dims first, then the reduced shape; the q-th
// quantile of d sorted values at index (d - 1) q, in float64, picked or interpolated per method.
enum class Method { linear, lower, higher, midpoint, nearest };
template <class T>
Method method_of(const Args<T>& a) {
  const std::string m = a.get("method", std::string("linear"));
  if (m == "linear") return Method::linear;
  if (m == "lower") return Method::lower;
  if (m == "higher") return Method::higher;
  if (m == "midpoint") return Method::midpoint;
  if (m == "nearest") return Method::nearest;
  a.fail("method", "not one of 'linear', 'lower', 'higher', 'midpoint', 'nearest'");
}
// The reduced axes, in the order given; every axis when axis is None.
template <class T>
std::vector<int> quantile_axes(const Args<T>& a, int rank) {
  std::vector<int> out;
  if (!a.has("axis")) {
    out.resize(rank);
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  for (int ax : a.axes("axis")) {
    const int d = axis_in(a, "axis", ax, rank);
    if (std::find(out.begin(), out.end(), d) != out.end()) a.fail("axis", "not a list of distinct axes");
    out.push_back(d);
  }
  return out;
}
enum class Q { median, quantile, percentile };
// q's shape (none for median) and then x's without the reduced axes (kept as 1 with keepdims).
template <Q kind, class T>
Shape quantile_out_shape(const Args<T>& a, const Shape& x, const Shape& q, const std::vector<int>& axes) {
  Shape out;
  if (kind != Q::median) {
    if (q.size() > 1) a.fail("q", "not a number or a list of numbers");
    out = q;
  }
  const bool keep = a.get("keepdims", false);
  for (int d = 0; d < static_cast<int>(x.size()); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end())
      out.push_back(x[d]);
    else if (keep)
      out.push_back(1);
  }
  return out;
}
template <Q kind>
Shape quantile_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  method_of(a);
  return quantile_out_shape<kind>(a, x, kind == Q::median ? Shape{} : a.value("q"),
                                  quantile_axes(a, static_cast<int>(x.size())));
}
// skip_nan: the nan* forms (NaNs left out; a group of NaNs only is NaN), else a group with a NaN is
// NaN. any_method: false for keras.ops.quantile, whose op does not pass its method on (Quantile.call),
// so that a model computes the linear interpolation whatever method it names.
template <Q kind, bool skip_nan, bool any_method = true>
Tensor quantile(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const std::vector<int> axes = quantile_axes(a, x.rank());
  std::vector<float> qs{0.5f};
  Shape qshape;
  if (kind != Q::median) {
    const Tensor q = a.value("q");
    qshape = q.shape();
    qs.assign(q.data<float>(), q.data<float>() + q.size());  // float32, as Keras converts q
    if (kind == Q::percentile)
      for (float& v : qs) v = v / 100.f;
    for (float v : qs)
      if (!(v >= 0.f && v <= 1.f)) a.fail("q", kind == Q::percentile ? "not in [0, 100]" : "not in [0, 1]");
  }
  const Method method = any_method ? method_of(a) : Method::linear;
  const Shape out = quantile_out_shape<kind>(a, x.shape(), qshape, axes);
  const Groups g = grouped(x.shape(), axes);
  const int64_t nq = static_cast<int64_t>(qs.size());
  Picks p{std::vector<int64_t>(nq * g.count), {}, std::vector<float>(nq * g.count, 1.f), {}};
  if (method == Method::linear || method == Method::midpoint)
    p.b.assign(nq * g.count, 0), p.wb.assign(nq * g.count, 0.f);
  const float* xs = x.data<float>();
  std::vector<int64_t> at;
  for (int64_t k = 0; k < g.count; ++k) {
    at.clear();
    bool nan = false;
    for (int64_t i = 0; i < g.size; ++i) {
      const int64_t e = g.at[k * g.size + i];
      if (std::isnan(xs[e])) nan = true;
      if (!skip_nan || !std::isnan(xs[e])) at.push_back(e);
    }
    const int64_t d = static_cast<int64_t>(at.size());
    const std::vector<int64_t> o = order_of(xs, at.data(), d, false);
    for (int64_t qi = 0; qi < nq; ++qi) {
      const int64_t j = qi * g.count + k;
      if ((nan && !skip_nan) || d == 0) {
        p.a[j] = -1;
        continue;
      }
      const double exact = static_cast<double>(d - 1) * static_cast<double>(qs[qi]);
      auto clip = [&](double i) { return std::clamp<int64_t>(static_cast<int64_t>(i), 0, d - 1); };
      const int64_t lower = clip(std::floor(exact)), higher = clip(std::ceil(exact));
      switch (method) {
        case Method::lower:
          p.a[j] = at[o[lower]];
          break;
        case Method::higher:
          p.a[j] = at[o[higher]];
          break;
        case Method::nearest:
          p.a[j] = at[o[clip(std::nearbyint(exact))]];
          break;  // tf.round: half to even
        case Method::midpoint:
          p.a[j] = at[o[higher]], p.b[j] = at[o[lower]], p.wa[j] = 0.5f, p.wb[j] = 0.5f;
          break;
        case Method::linear: {
          const int64_t smaller = std::max<int64_t>(higher - 1, 0),
                        larger = std::min<int64_t>(smaller + 1, d - 1);
          const float fraction = static_cast<float>(static_cast<double>(larger) - exact);
          p.a[j] = at[o[larger]], p.b[j] = at[o[smaller]], p.wa[j] = 1.f - fraction, p.wb[j] = fraction;
          break;
        }
      }
    }
  }
  return picked(kind == Q::median ? "median" : "quantile", x, out, std::move(p));
}

// ---- searchsorted: per row of values, the insertion points into the same row of sorted_sequence
// (rows: every axis but the last; a 1-D sequence with 1-D values is one row). digitize: the bin of
// each value, bins[i - 1] <= x < bins[i] (tf Bucketize, increasing bins).
template <class T>
void check_searchsorted(const Args<T>& a, const Shape& s, const Shape& v) {
  if (s.empty()) a.fail("sorted_sequence", "not a tensor of rank 1 or more");
  if (v.size() != s.size()) a.fail("values", "not of the rank of `sorted_sequence`, with its leading dims");
  for (size_t d = 0; d + 1 < s.size(); ++d)
    if (s[d] >= 0 && v[d] >= 0 && s[d] != v[d])
      a.fail("values", "not of the leading dims of `sorted_sequence`");
}
template <class T>
bool right_side(const Args<T>& a) {
  const std::string side = a.get("side", std::string("left"));
  if (side != "left" && side != "right") a.fail("side", "neither 'left' nor 'right'");
  return side == "right";
}
Shape searchsorted_shape(const Args<Shape>& a) {
  check_searchsorted(a, a.value("sorted_sequence"), a.value("values"));
  right_side(a);
  return a.value("values");
}
Tensor searchsorted(const Args<Tensor>& a) {
  const Tensor s = a.value("sorted_sequence"), v = a.value("values");
  check_searchsorted(a, s.shape(), v.shape());
  const bool right = right_side(a);
  const int64_t n = s.dim(-1), m = v.dim(-1), rows = n == 0 ? 1 : s.size() / n;
  Tensor y = Tensor::empty(v.shape());
  for (int64_t r = 0; r < rows && m > 0; ++r) {
    const float* seq = s.data<float>() + r * n;
    for (int64_t i = 0; i < m; ++i) {
      const float x = v.data<float>()[r * m + i];
      const float* at = right ? std::upper_bound(seq, seq + n, x) : std::lower_bound(seq, seq + n, x);
      y.data<float>()[r * m + i] = static_cast<float>(at - seq);
    }
  }
  return y;
}
template <class T>
void check_bins(const Args<T>& a, const Shape& b) {
  if (b.size() != 1) a.fail("bins", "not a 1-D array");
}
Shape digitize_shape(const Args<Shape>& a) {
  check_bins(a, a.value("bins"));
  return a.value("x");
}
Tensor digitize(const Args<Tensor>& a) {
  const Tensor x = a.value("x"), bins = a.value("bins");
  check_bins(a, bins.shape());
  const float* b = bins.data<float>();
  for (int64_t i = 1; i < bins.size(); ++i)
    if (!(b[i - 1] <= b[i])) a.fail("bins", "not increasing");
  Tensor y = Tensor::empty(x.shape());
  for (int64_t i = 0; i < x.size(); ++i)
    y.data<float>()[i] = static_cast<float>(std::upper_bound(b, b + bins.size(), x.data<float>()[i]) - b);
  return y;
}

const std::vector<std::pair<std::string, std::string>> kTfValues = {{"values", "x"}};

}  // namespace

std::vector<OpDef> sorting_ops() {
  // clang-format off
  return {
      OpDef{"ops.numpy.Sort", "sort", {"x", "axis", "direction"}, kTfValues, sort_shape, sort<false>},
      OpDef{"ops.numpy.Argsort", "argsort", {"x", "axis", "direction", "stable"}, kTfValues, sort_shape, sort<true>},
      OpDef{"ops.math.TopK", "math.top_k|nn.top_k", {"x", "k", "sorted", "index_type"}, {{"input", "x"}}, nullptr, nullptr,
            top_k_shapes, top_k},
      OpDef{"ops.math.InTopK", "math.in_top_k|nn.in_top_k", {"targets", "predictions", "k"}, {}, in_top_k_shape, in_top_k},
      // TF 1's argument order, which tf_keras records for tf.math.in_top_k.
      OpDef{nullptr, "compat.v1.math.in_top_k|compat.v1.nn.in_top_k", {"predictions", "targets", "k"}, {}, in_top_k_shape,
            in_top_k},
      OpDef{"ops.numpy.Median", nullptr, {"x", "axis", "keepdims"}, {}, quantile_shape<Q::median>, quantile<Q::median, false>},
      OpDef{"ops.numpy.Percentile", nullptr, {"x", "q", "axis", "method", "keepdims"}, {}, quantile_shape<Q::percentile>,
            quantile<Q::percentile, false>},
      OpDef{"ops.numpy.Quantile", nullptr, {"x", "q", "axis", "method", "keepdims"}, {}, quantile_shape<Q::quantile>,
            quantile<Q::quantile, false, false>},
      OpDef{"ops.numpy.Nanmedian", nullptr, {"x", "axis", "keepdims"}, {}, quantile_shape<Q::median>, quantile<Q::median, true>},
      OpDef{"ops.numpy.Nanpercentile", nullptr, {"x", "q", "axis", "method", "keepdims"}, {}, quantile_shape<Q::percentile>,
            quantile<Q::percentile, true>},
      OpDef{"ops.numpy.Nanquantile", nullptr, {"x", "q", "axis", "method", "keepdims"}, {}, quantile_shape<Q::quantile>,
            quantile<Q::quantile, true>},
      OpDef{"ops.numpy.SearchSorted", "searchsorted", {"sorted_sequence", "values", "side", "out_type"}, {}, searchsorted_shape,
            searchsorted},
      OpDef{"ops.numpy.Digitize", nullptr, {"x", "bins"}, {}, digitize_shape, digitize},
  };
  // clang-format on
}

}  // namespace kerascpp::layers::op_nodes
