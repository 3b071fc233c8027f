// Op nodes that gather and scatter by index (split_join_ops.cpp's second file): keras.ops
// take_along_axis / select / slice_update / scatter_update / scatter, tf_keras's tf.gather_nd /
// scatter_nd / tensor_scatter_nd_update (add, max, min). Gathers are ops::take on a flattened view
// (its gradient adds rows back); scatters record their own backward (the gradient reaches whichever
// value the output holds); select and slice_update are wheres.
#include <algorithm>
#include <numeric>

#include "layers/op_nodes/op_node.h"
#include "ops/grad_util.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {
namespace {

int64_t product(Shape::const_iterator b, Shape::const_iterator e) {
  int64_t n = 1;
  for (; b != e; ++b) n = n < 0 || *b < 0 ? -1 : n * *b;
  return n;
}

// Integer values carried as float32, as int64 (truncated, as a cast to int).
int64_t at(const Tensor& t, int64_t i) { return static_cast<int64_t>(t.data<float>()[i]); }

// ---- take_along_axis: x and indices broadcast but for the axis; out[.., i, ..] = x[.., idx[.., i, ..], ..]
// (Keras wraps negative indices once). axis None: x flattened, indices of rank 1.
template <class T>
int along_axis(const Args<T>& a, int rank) {
  const int ax = a.template get<int>("axis", 0);
  if (ax < -rank || ax >= rank) a.fail("axis", "not an axis of the input's " + std::to_string(rank) + " dims");
  return ax < 0 ? ax + rank : ax;
}
// The broadcast shapes of x and of the indices (they differ on the axis only).
template <class T>
std::pair<Shape, Shape> along_shapes(const Args<T>& a, const Shape& x, const Shape& idx) {
  if (!a.has("axis")) {
    if (idx.size() != 1) a.fail("indices", "not of rank 1 when axis is None");
    return {{product(x.begin(), x.end())}, idx};
  }
  if (x.size() != idx.size()) a.fail("indices", "not of the input's rank " + std::to_string(x.size()));
  const int ax = along_axis(a, static_cast<int>(x.size()));
  Shape xs = x, is = idx;
  xs[ax] = is[ax] = 1;
  Shape common;
  try {
    common = ops::broadcast_shape(xs, is);
  } catch (const std::exception&) {
    a.fail("indices", "not broadcastable to the input " + shape_str(x) + " off the axis");
  }
  xs = is = common;
  xs[ax] = x[ax], is[ax] = idx[ax];
  return {xs, is};
}
Shape take_along_shape(const Args<Shape>& a) { return along_shapes(a, a.value("x"), a.value("indices")).second; }
Tensor take_along_axis(const Args<Tensor>& a) {
  Tensor x = a.value("x"), idx = a.value("indices");
  const std::vector<Shape> in = {x.shape(), idx.shape()};
  const auto [xs, is] = along_shapes(Args<Shape>(Json{{"x", Json{{"kerascpp_input", 0}}}, {"indices", Json{{"kerascpp_input", 1}}},
                                                      {"axis", a.json("axis")}},
                                                 in, a.who()),
                                     x.shape(), idx.shape());
  x = broadcast(x.reshape(a.has("axis") ? x.shape() : Shape{x.size()}), xs);
  idx = ops::detail::broadcast_to(idx, is);
  const int ax = a.has("axis") ? along_axis(a, static_cast<int>(xs.size())) : 0;
  const int64_t n = xs[ax], inner = product(xs.begin() + ax + 1, xs.end()), m = is[ax];
  Tensor flat = Tensor::empty(is);
  for (int64_t i = 0; i < idx.size(); ++i) {
    int64_t k = at(idx, i);
    if (k < 0) k += n;
    if (k < 0 || k >= n)
      KCPP_THROW(ValueError, a.who(), ": argument 'indices' holds ", at(idx, i), ", outside the axis's size ", n);
    const int64_t outer = i / (m * inner), j = i % inner;
    flat.data<float>()[i] = static_cast<float>((outer * n + k) * inner + j);
  }
  return ops::take(x.reshape({x.size()}), flat);
}

// ---- rows of a tensor picked by index vectors: `indices` (..., depth) address the dims
// [first, first + depth) of a tensor of shape `s`; each index vector is one row of the view
// (prod(s[:first + depth]), prod(s[first + depth:])). With batch dims (first > 0) the leading dims of
// the indices walk the tensor's batch dims.
std::vector<int64_t> rows_of(const Args<Tensor>& a, const Tensor& idx, const Shape& s, int first) {
  const int64_t depth = idx.dim(-1), count = idx.size() / std::max<int64_t>(depth, 1);
  const int64_t batch = product(s.begin(), s.begin() + first), per_batch = count / std::max<int64_t>(batch, 1);
  std::vector<int64_t> rows(depth == 0 ? idx.size() : count);
  for (int64_t r = 0; r < static_cast<int64_t>(rows.size()); ++r) {
    int64_t row = r / std::max<int64_t>(per_batch, 1);
    for (int64_t d = 0; d < depth; ++d) {
      const int64_t k = at(idx, r * depth + d), n = s[first + d];
      if (k < 0 || k >= n)
        KCPP_THROW(ValueError, a.who(), ": argument 'indices' holds ", k, ", outside [0, ", n, ") for dim ", first + d,
                   " of shape ", shape_str(s));
      row = row * n + k;
    }
    rows[r] = row;
  }
  return rows;
}
template <class T>
void check_index_shape(const Args<T>& a, const Shape& idx, const Shape& s, int first) {
  if (idx.empty() || idx.back() < 0) a.fail("indices", "not a tensor of index vectors along its last axis, of a known length");
  if (first + idx.back() > static_cast<int64_t>(s.size()))
    a.fail("indices", "not a tensor of index vectors no longer than the rank of the shape " + shape_str(s));
  if (static_cast<int>(idx.size()) <= first) a.fail("batch_dims", "not less than the rank of `indices`");
  for (int d = 0; d < first; ++d)
    if (idx[d] >= 0 && s[d] >= 0 && idx[d] != s[d]) a.fail("indices", "not a tensor whose batch dims match the params' " + shape_str(s));
}

// ---- tf.gather_nd(params, indices, batch_dims): indices (B..., N..., depth) -> (B..., N..., rest).
template <class T>
int gather_batch_dims(const Args<T>& a) {
  const std::string policy = a.template get<std::string>("bad_indices_policy", "");
  if (!policy.empty() && policy != "DEFAULT" && policy != "ERROR") a.fail("bad_indices_policy", "not \"\", DEFAULT or ERROR");
  const int b = a.template get<int>("batch_dims", 0);
  if (b < 0) a.fail("batch_dims", "not an int >= 0");
  return b;
}
Shape gather_nd_shape(const Args<Shape>& a) {
  const Shape p = a.value("params"), idx = a.value("indices");
  const int b = gather_batch_dims(a);
  check_index_shape(a, idx, p, b);
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), p.begin() + b + idx.back(), p.end());
  return out;
}
Tensor gather_nd(const Args<Tensor>& a) {
  const Tensor p = a.value("params"), idx = a.value("indices");
  const int b = gather_batch_dims(a);
  check_index_shape(a, idx.shape(), p.shape(), b);
  const std::vector<int64_t> rows = rows_of(a, idx, p.shape(), b);
  const int64_t inner = product(p.shape().begin() + b + idx.dim(-1), p.shape().end());
  Tensor r = Tensor::empty({static_cast<int64_t>(rows.size())});
  for (size_t i = 0; i < rows.size(); ++i) r.data<float>()[i] = static_cast<float>(rows[i]);
  Shape out(idx.shape().begin(), idx.shape().end() - 1);
  out.insert(out.end(), p.shape().begin() + b + idx.dim(-1), p.shape().end());
  return ops::take(p.reshape({p.size() / std::max<int64_t>(inner, 1), inner}), r).reshape(out);
}

// ---- scatters: x with rows of updates written in (update: the last write wins), added, or kept
// by max / min. The gradient reaches what the output holds: x where no update won, else the update.
enum class Reduce { update, add, max, min };
Tensor scatter_rows(const Tensor& x, const std::vector<int64_t>& rows, const Tensor& updates, Reduce how) {
  const int64_t row = rows.empty() ? 0 : updates.size() / static_cast<int64_t>(rows.size());
  Tensor y = x.copy();
  std::vector<int64_t> from(how == Reduce::add ? 0 : x.size(), -1);  // the update element each output holds
  float* out = y.data<float>();
  const float* u = updates.data<float>();
  for (size_t n = 0; n < rows.size(); ++n)
    for (int64_t j = 0; j < row; ++j) {
      const int64_t e = rows[n] * row + j, src = static_cast<int64_t>(n) * row + j;
      const bool wins = how == Reduce::update || (how == Reduce::max && u[src] > out[e]) || (how == Reduce::min && u[src] < out[e]);
      if (how == Reduce::add) out[e] += u[src];
      else if (wins) out[e] = u[src], from[e] = src;
    }
  if (ops::Recorder* r = ops::tape_for({&x, &updates}))
    r->record("scatter", {x, updates}, y, [from, rows, row, how, xs = x.shape(), us = updates.shape()](const Tensor& dy) {
      const float* g = dy.data<float>();
      Tensor dx = dy.copy(), du = Tensor::zeros(us);
      for (size_t n = 0; n < rows.size(); ++n)
        for (int64_t j = 0; j < row; ++j) {
          const int64_t e = rows[n] * row + j, src = static_cast<int64_t>(n) * row + j;
          if (how == Reduce::add || from[e] == src) du.data<float>()[src] = g[e];
        }
      if (how != Reduce::add)
        for (size_t e = 0; e < from.size(); ++e)
          if (from[e] >= 0) dx.data<float>()[e] = 0.f;
      return ops::Grads{dx, du};
    });
  return y;
}
// updates must be indices.shape[:-1] + shape[depth:].
template <class T>
void check_updates(const Args<T>& a, const char* param, const Shape& idx, const Shape& u, const Shape& s) {
  Shape want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), s.begin() + idx.back(), s.end());
  bool ok = want.size() == u.size();
  for (size_t d = 0; ok && d < u.size(); ++d) ok = u[d] < 0 || want[d] < 0 || u[d] == want[d];
  if (!ok) a.fail(param, "not of the shape " + shape_str(want) + " (indices.shape[:-1] + shape[index depth:])");
}
template <class T>
Reduce reduction(const Args<T>& a, Reduce fixed) {
  if (fixed != Reduce::update || !a.has("reduction")) return fixed;
  const std::string r = a.template get<std::string>("reduction", "");
  if (r == "add") return Reduce::add;
  if (r == "max") return Reduce::max;
  if (r == "min") return Reduce::min;
  a.fail("reduction", "not None, \"add\", \"max\" or \"min\" (kerascpp does not run \"mul\")");
}
template <Reduce fixed>
Shape scatter_update_shape(const Args<Shape>& a) {
  const Shape x = a.value("inputs"), idx = a.value("indices");
  reduction(a, fixed);
  gather_batch_dims(a);
  check_index_shape(a, idx, x, 0);
  check_updates(a, "updates", idx, a.value("updates"), x);
  return x;
}
template <Reduce fixed>
Tensor scatter_update(const Args<Tensor>& a) {
  const Tensor x = a.value("inputs"), idx = a.value("indices"), u = a.value("updates");
  const Reduce how = reduction(a, fixed);
  gather_batch_dims(a);  // bad_indices_policy
  check_index_shape(a, idx.shape(), x.shape(), 0);
  check_updates(a, "updates", idx.shape(), u.shape(), x.shape());
  return scatter_rows(x, rows_of(a, idx, x.shape(), 0), u, how);
}
// keras.ops.scatter / tf.scatter_nd: zeros of `shape` with the values added in (duplicates add up).
template <class T>
Shape scatter_target(const Args<T>& a) {
  const std::vector<int64_t> s = a.template get<std::vector<int64_t>>("shape", {});
  for (int64_t d : s)
    if (d < 0) a.fail("shape", "not a shape of dims >= 0");
  return Shape(s.begin(), s.end());
}
Shape scatter_shape(const Args<Shape>& a) {
  const Shape s = scatter_target(a), idx = a.value("indices");
  check_index_shape(a, idx, s, 0);
  check_updates(a, "values", idx, a.value("values"), s);
  return s;
}
Tensor scatter(const Args<Tensor>& a) {
  const Shape s = scatter_target(a);
  const Tensor idx = a.value("indices"), v = a.value("values");
  check_index_shape(a, idx.shape(), s, 0);
  check_updates(a, "values", idx.shape(), v.shape(), s);
  return scatter_rows(Tensor::zeros(s), rows_of(a, idx, s, 0), v, Reduce::add);
}

// ---- slice_update: updates written at start_indices (clamped so that they fit, as XLA's
// dynamic_update_slice): where(window, padded updates, inputs).
Shape slice_update_shape(const Args<Shape>& a) {
  const Shape x = a.value("inputs"), u = a.value("updates");
  if (u.size() != x.size()) a.fail("updates", "not of the input's rank " + std::to_string(x.size()));
  if (a.get<std::vector<int64_t>>("start_indices", {}).size() != x.size())
    a.fail("start_indices", "not one start per axis of the input's " + std::to_string(x.size()));
  for (size_t d = 0; d < x.size(); ++d)
    if (u[d] >= 0 && x[d] >= 0 && u[d] > x[d]) a.fail("updates", "not a tensor that fits in the input " + shape_str(x));
  return x;
}
Tensor slice_update(const Args<Tensor>& a) {
  const Tensor x = a.value("inputs"), u = a.value("updates");
  const std::vector<Shape> in = {x.shape(), u.shape()};
  slice_update_shape(Args<Shape>(Json{{"inputs", Json{{"kerascpp_input", 0}}}, {"updates", Json{{"kerascpp_input", 1}}},
                                      {"start_indices", a.json("start_indices")}},
                                 in, a.who()));
  std::vector<int64_t> start = a.get<std::vector<int64_t>>("start_indices", {});
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (int d = 0; d < x.rank(); ++d) {
    start[d] = std::clamp<int64_t>(start[d], 0, x.dim(d) - u.dim(d));
    pads.emplace_back(start[d], x.dim(d) - u.dim(d) - start[d]);
  }
  return ops::where(ops::pad(ops::detail::filled(u.shape(), 1.f), pads), ops::pad(u, pads), x);
}

// ---- select: the first choice whose condition holds, else the default (all broadcast together).
Shape select_shape(const Args<Shape>& a) {
  const std::vector<Shape> conds = a.values("condlist"), choices = a.values("choicelist");
  if (conds.size() != choices.size()) a.fail("choicelist", "not as long as condlist");
  Shape s = a.has("default") ? a.value("default") : Shape{};
  for (size_t i = 0; i < conds.size(); ++i) s = ops::broadcast_shape(ops::broadcast_shape(s, conds[i]), choices[i]);
  return s;
}
Tensor select(const Args<Tensor>& a) {
  const std::vector<Tensor> conds = a.values("condlist"), choices = a.values("choicelist");
  if (conds.size() != choices.size()) a.fail("choicelist", "not as long as condlist");
  Tensor y = a.has("default") ? a.value("default") : ops::detail::scalar(0.f);
  Shape s = y.shape();
  for (size_t i = 0; i < conds.size(); ++i) s = ops::broadcast_shape(ops::broadcast_shape(s, conds[i].shape()), choices[i].shape());
  y = broadcast(y, s);
  for (size_t i = conds.size(); i-- > 0;)
    y = ops::where(ops::detail::broadcast_to(ops::as_mask(conds[i]), s), broadcast(choices[i], s), y);
  return y;
}

}  // namespace

std::vector<OpDef> split_join_gather_ops() {
  const std::vector<std::string> update_params = {"inputs", "indices", "updates", "reduction", "bad_indices_policy"};
  return {
      OpDef{"ops.numpy.TakeAlongAxis", nullptr, {"x", "indices", "axis"}, {}, take_along_shape, take_along_axis},
      OpDef{nullptr, "gather_nd|compat.v1.gather_nd", {"params", "indices", "batch_dims", "bad_indices_policy"}, {},
            gather_nd_shape, gather_nd},
      OpDef{"ops.core.ScatterUpdate", "tensor_scatter_nd_update", update_params, {{"tensor", "inputs"}},
            scatter_update_shape<Reduce::update>, scatter_update<Reduce::update>},
      OpDef{nullptr, "tensor_scatter_nd_add", update_params, {{"tensor", "inputs"}}, scatter_update_shape<Reduce::add>,
            scatter_update<Reduce::add>},
      OpDef{nullptr, "tensor_scatter_nd_max", update_params, {{"tensor", "inputs"}}, scatter_update_shape<Reduce::max>,
            scatter_update<Reduce::max>},
      OpDef{nullptr, "tensor_scatter_nd_min", update_params, {{"tensor", "inputs"}}, scatter_update_shape<Reduce::min>,
            scatter_update<Reduce::min>},
      OpDef{"ops.core.Scatter", "scatter_nd", {"indices", "values", "shape"}, {{"updates", "values"}}, scatter_shape, scatter},
      OpDef{"ops.core.SliceUpdate", nullptr, {"inputs", "start_indices", "updates"}, {}, slice_update_shape, slice_update},
      OpDef{"ops.numpy.Select", nullptr, {"condlist", "choicelist", "default"}, {}, select_shape, select},
  };
}

}  // namespace kerascpp::layers::op_nodes
