// x[key] with numpy's basic indexing (integers, slices with steps, None, one ellipsis), and its gradient.
#include <algorithm>

#include "ops/checks.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

// What the key does to each dimension of x, in order, and where new axes go.
struct Plan {
  struct Dim {
    int64_t start = 0, step = 1, count = 0;
    bool kept = true;  // false for an integer index, which drops the dim
  };
  std::vector<Dim> dims;   // one per dim of x
  Shape kept_shape;        // the counts of the kept dims, in order (the gather's shape)
  Shape out_shape;         // kept dims with the new axes (1) in place
};

int64_t ceil_div(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// The key with its ellipsis expanded (or appended) to full slices: one entry per dim of x plus new axes.
std::vector<Index> expanded(const std::vector<Index>& key, size_t rank) {
  size_t consumed = 0, ellipses = 0;
  for (const Index& k : key) {
    consumed += k.kind == Index::integer || k.kind == Index::range;
    ellipses += k.kind == Index::ellipsis;
  }
  KCPP_CHECK(ellipses <= 1, ValueError, "get_item: an index can only have a single ellipsis ('...')");
  KCPP_CHECK(consumed <= rank, ValueError, "get_item: too many indices for a tensor of rank ", rank, ": ", consumed,
             " were indexed");
  std::vector<Index> out;
  bool filled = false;
  for (const Index& k : key) {
    if (k.kind != Index::ellipsis) {
      out.push_back(k);
      continue;
    }
    for (size_t i = consumed; i < rank; ++i) out.push_back(Index());
    filled = true;
  }
  if (!filled)
    for (size_t i = consumed; i < rank; ++i) out.push_back(Index());
  return out;
}

// numpy's slice.indices(n) for a known n; the count of the result.
Plan::Dim resolve(const Index& k, int64_t n, int dim) {
  Plan::Dim d;
  if (k.kind == Index::integer) {
    KCPP_CHECK(k.at >= -n && k.at < n, ValueError, "get_item: index ", k.at, " is out of bounds for axis ", dim,
               " with size ", n);
    d.start = k.at < 0 ? k.at + n : k.at;
    d.count = 1;
    d.kept = false;
    return d;
  }
  KCPP_CHECK(k.step != 0, ValueError, "get_item: slice step cannot be zero");
  d.step = k.step;
  auto norm = [&](int64_t v, int64_t lo, int64_t hi) { return std::clamp(v < 0 ? v + n : v, lo, hi); };
  if (k.step > 0) {
    d.start = k.start ? norm(*k.start, 0, n) : 0;
    const int64_t stop = k.stop ? norm(*k.stop, 0, n) : n;
    d.count = ceil_div(stop - d.start, k.step);
  } else {
    d.start = k.start ? norm(*k.start, -1, n - 1) : n - 1;
    const int64_t stop = k.stop ? norm(*k.stop, -1, n - 1) : -1;
    d.count = ceil_div(d.start - stop, -k.step);
  }
  return d;
}

Plan plan(const Shape& shape, const std::vector<Index>& key) {
  Plan p;
  int dim = 0;
  for (const Index& k : expanded(key, shape.size())) {
    if (k.kind == Index::new_axis) {
      p.out_shape.push_back(1);
      continue;
    }
    const int64_t n = shape[dim];
    Plan::Dim d;
    if (n < 0) {  // unknown size: a full slice or an index keep it unknown; anything else too
      d.kept = k.kind != Index::integer;
      d.count = -1;
    } else {
      d = resolve(k, n, dim);
    }
    p.dims.push_back(d);
    if (d.kept) p.kept_shape.push_back(d.count), p.out_shape.push_back(d.count);
    ++dim;
  }
  return p;
}

// Visits the source offset of every element of the gather, in order.
template <typename F>
void walk(const Plan& p, const Shape& shape, F&& visit) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  std::vector<int64_t> idx(rank, 0);
  int64_t total = 1;
  for (const Plan::Dim& d : p.dims) total *= d.count;
  for (int64_t n = 0; n < total; ++n) {
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) off += (p.dims[d].start + idx[d] * p.dims[d].step) * strides[d];
    visit(n, off);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < p.dims[d].count) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

Shape get_item_shape(const Shape& x, const std::vector<Index>& key) { return plan(x, key).out_shape; }

Tensor get_item(const Tensor& x, const std::vector<Index>& key) {
  detail::check_float32("get_item", x, "x");
  const Plan p = plan(x.shape(), key);
  Tensor y = Tensor::empty(p.out_shape);
  const float* xs = x.data<float>();
  float* ys = y.data<float>();
  walk(p, x.shape(), [&](int64_t n, int64_t off) { ys[n] = xs[off]; });
  if (Recorder* r = tape_for({&x}))
    r->record("get_item", {x}, y, [p, shape = x.shape()](const Tensor& dy) {
      Tensor dx = Tensor::zeros(shape);
      walk(p, shape, [&](int64_t n, int64_t off) { dx.data<float>()[off] += dy.data<float>()[n]; });
      return Grads{dx};
    });
  return y;
}

}  // namespace kerascpp::ops
