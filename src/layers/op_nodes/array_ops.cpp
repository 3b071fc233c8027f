// Array op nodes: keras.ops reshape / transpose / expand_dims / squeeze / concatenate / stack / tile /
// repeat / take / matmul / einsum and `x[key]` (GetItem), and the tf functions tf_keras records
// for them (tf.reshape, tf.concat, tf.gather, `x[...]` as SlicingOpLambda, ...).
#include <numeric>

#include "layers/op_nodes/op_node.h"
#include "ops/grad_util.h"

namespace kerascpp::layers::op_nodes {
namespace {

template <class T>
int axis_of(const Args<T>& a, const char* name, int rank, int fallback) {
  const int ax = a.has(name) ? a.template get<int>(name, 0) : fallback;
  KCPP_CHECK(ax >= -rank && ax < rank, ValueError, a.who(), ": ", name, "=", ax, " is out of bounds for rank ", rank);
  return ax < 0 ? ax + rank : ax;
}

// ---- reshape: one -1 takes what is left; with unknown input dims it stays unknown. The new shape may
// hold tensors the graph computes (tf.reshape(x, [tf.shape(x)[0], -1, 4])): their dims, and the -1 then,
// are unknown until the model runs.
Shape reshape_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  const std::vector<int64_t> target = a.ints("newshape");
  int64_t known = 1, fill = -1;
  for (int64_t d : x) known = (known < 0 || d < 0) ? -1 : known * d;
  int64_t rest = 1;
  bool computed = false;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (fill >= 0) a.fail("newshape", "a shape with at most one -1");
      fill = static_cast<int64_t>(i);
    } else if (target[i] == kComputed) {
      computed = true;
    } else {
      if (target[i] < 0) a.fail("newshape", "a shape of dims >= 0 and at most one -1");
      rest *= target[i];
    }
  }
  Shape out(target.begin(), target.end());
  for (int64_t& d : out)
    if (d == kComputed) d = -1;
  if (known >= 0 && !computed) {
    KCPP_CHECK(fill >= 0 ? rest > 0 && known % rest == 0 : known == rest, ValueError, a.who(), ": cannot reshape a tensor of shape ",
               shape_str(x), " to ", shape_str(out));
    if (fill >= 0) out[fill] = known / rest;
  }
  return out;
}
Tensor reshape(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  return x.reshape(a.ints("newshape"));
}

template <class T>
std::vector<int> perm_of(const Args<T>& a, size_t rank) {
  std::vector<int> p(rank);
  if (!a.has("axes")) {
    std::iota(p.rbegin(), p.rend(), 0);
    return p;
  }
  p = a.template get<std::vector<int>>("axes", {});
  std::vector<char> seen(rank, 0);
  bool ok = p.size() == rank;
  for (int& d : p) {
    d = d < 0 ? d + static_cast<int>(rank) : d;
    ok = ok && d >= 0 && d < static_cast<int>(rank) && !seen[d]++;
  }
  if (!ok) a.fail("axes", "a permutation of the input's " + std::to_string(rank) + " axes");
  return p;
}
Shape transpose_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  Shape out;
  for (int d : perm_of(a, x.size())) out.push_back(x.at(d));
  return out;
}
Tensor transpose(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (a.has("conjugate") && a.get("conjugate", false)) a.fail("conjugate", "supported by kerascpp (real tensors)");
  return ops::transpose(x, perm_of(a, x.rank()));
}

// ---- expand_dims / squeeze: reshapes.
Shape expand_dims_shape(const Args<Shape>& a) {
  Shape x = a.value("x");
  std::vector<int> axes = a.axes("axis");
  const int rank = static_cast<int>(x.size() + axes.size());
  for (int& ax : axes) ax = ax < 0 ? ax + rank : ax;
  std::sort(axes.begin(), axes.end());
  for (int ax : axes) {
    KCPP_CHECK(ax >= 0 && ax <= static_cast<int>(x.size()), ValueError, a.who(), ": axis ", ax, " is out of bounds");
    x.insert(x.begin() + ax, 1);
  }
  return x;
}
Shape squeeze_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  std::vector<int> axes = a.axes("axis");
  for (int& ax : axes) ax = ops::normalize_axis(ax, static_cast<int>(x.size()));
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    const bool listed = std::find(axes.begin(), axes.end(), static_cast<int>(d)) != axes.end();
    if (listed) KCPP_CHECK(x[d] == 1 || x[d] < 0, ValueError, a.who(), ": cannot squeeze axis ", d, " of size ", x[d]);
    if (axes.empty() ? x[d] != 1 : !listed) out.push_back(x[d]);
  }
  return out;
}
template <Shape (*shape)(const Args<Shape>&)>
Tensor reshaped(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  Json bound = {{"x", Json{{"kerascpp_input", 0}}}, {"axis", a.json("axis")}};
  const std::vector<Shape> in = {x.shape()};
  return x.reshape(shape(Args<Shape>(bound, in, a.who())));
}

// ---- concatenate / stack
Shape concatenate_shape(const Args<Shape>& a) {
  const std::vector<Shape> xs = a.values("xs");
  Shape out = xs[0];
  const int ax = axis_of(a, "axis", static_cast<int>(out.size()), 0);
  for (size_t i = 1; i < xs.size(); ++i) {
    KCPP_CHECK(xs[i].size() == out.size(), ValueError, a.who(), ": all inputs must have the same rank");
    out[ax] = out[ax] < 0 || xs[i][ax] < 0 ? -1 : out[ax] + xs[i][ax];
  }
  return out;
}
Tensor concatenate(const Args<Tensor>& a) {
  const std::vector<Tensor> xs = a.values("xs");
  return ops::concatenate(xs, axis_of(a, "axis", xs[0].rank(), 0));
}
Shape stack_shape(const Args<Shape>& a) {
  const std::vector<Shape> xs = a.values("xs");
  Shape out = xs[0];
  const int ax = axis_of(a, "axis", static_cast<int>(out.size()) + 1, 0);
  out.insert(out.begin() + ax, static_cast<int64_t>(xs.size()));
  return out;
}
Tensor stack(const Args<Tensor>& a) {
  std::vector<Tensor> xs = a.values("xs");
  const int ax = axis_of(a, "axis", xs[0].rank() + 1, 0);
  for (Tensor& x : xs) {
    Shape s = x.shape();
    s.insert(s.begin() + ax, 1);
    x = x.reshape(s);
  }
  return ops::concatenate(xs, ax);
}

// ---- tile / repeat
Shape tile_shape(const Args<Shape>& a) {
  Shape x = a.value("x");
  std::vector<int64_t> reps = a.ints("repeats");  // tensors the graph computes too: their dims unknown
  while (x.size() < reps.size()) x.insert(x.begin(), 1);
  while (reps.size() < x.size()) reps.insert(reps.begin(), 1);
  for (size_t d = 0; d < x.size(); ++d) {
    if (reps[d] != kComputed && reps[d] < 0) a.fail("repeats", "a list of counts >= 0");
    x[d] = x[d] < 0 || reps[d] == kComputed ? -1 : x[d] * reps[d];
  }
  return x;
}
Tensor tile(const Args<Tensor>& a) {
  Tensor x = a.value("x");
  std::vector<int64_t> reps = a.ints("repeats");
  for (int64_t r : reps)
    if (r < 0) a.fail("repeats", "a list of counts >= 0");
  Shape s = x.shape();
  while (s.size() < reps.size()) s.insert(s.begin(), 1);
  while (reps.size() < s.size()) reps.insert(reps.begin(), 1);
  return ops::tile(x.reshape(s), reps);
}
Shape repeat_shape(const Args<Shape>& a) {
  if (!a.json("repeats").is_number_integer()) a.fail("repeats", "one int (kerascpp repeats every element alike)");
  Shape x = a.value("x");
  const int64_t r = a.get<int64_t>("repeats", 1);
  if (!a.has("axis")) {
    int64_t n = 1;
    for (int64_t d : x) n = n < 0 || d < 0 ? -1 : n * d;
    return {n < 0 ? -1 : n * r};
  }
  const int ax = axis_of(a, "axis", static_cast<int>(x.size()), 0);
  x[ax] = x[ax] < 0 ? -1 : x[ax] * r;
  return x;
}
Tensor repeat(const Args<Tensor>& a) {
  Tensor x = a.value("x");
  if (!a.has("axis")) x = x.reshape({x.size()});
  std::vector<int64_t> reps(x.rank(), 1);
  reps[a.has("axis") ? axis_of(a, "axis", x.rank(), 0) : 0] = a.get<int64_t>("repeats", 1);
  return ops::repeat(x, reps);
}

// ---- take / gather along one axis (axis null: of the flattened tensor)
Shape take_shape(const Args<Shape>& a) {
  const Shape x = a.value("x"), idx = a.value("indices");
  if (a.has("batch_dims") && a.get("batch_dims", 0) != 0) a.fail("batch_dims", "supported by kerascpp other than 0");
  if (!a.has("axis") && !a.keras3()) {  // tf.gather: axis 0
    Shape out = idx;
    out.insert(out.end(), x.begin() + 1, x.end());
    return out;
  }
  if (!a.has("axis")) return idx;
  const int ax = axis_of(a, "axis", static_cast<int>(x.size()), 0);
  Shape out(x.begin(), x.begin() + ax);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), x.begin() + ax + 1, x.end());
  return out;
}
// Keras 3's take wraps negative indices (i + n); tf.gather refuses them (ops::take's error).
Tensor wrapped(const Tensor& idx, int64_t n) {
  Tensor w = idx.dtype() == DType::float32 ? idx.copy() : idx.astype(DType::float32);
  for (int64_t i = 0; i < w.size(); ++i)
    if (w.data<float>()[i] < 0) w.data<float>()[i] += static_cast<float>(n);
  return w;
}
Tensor take(const Args<Tensor>& a) {
  Tensor x = a.value("x");
  const bool keras3 = a.keras3();
  const int64_t n = !a.has("axis") ? x.size() : x.dim(axis_of(a, "axis", x.rank(), 0));
  const Tensor idx = keras3 ? wrapped(a.value("indices"), n) : a.value("indices");
  if (!a.has("axis") && keras3) return ops::take(x.reshape({x.size()}), idx);
  const int ax = axis_of(a, "axis", x.rank(), 0);
  if (ax == 0) return ops::take(x, idx);
  std::vector<int> perm(x.rank());
  std::iota(perm.begin(), perm.end(), 0);
  std::rotate(perm.begin(), perm.begin() + ax, perm.begin() + ax + 1);  // the axis first
  const Tensor moved = ops::take(ops::transpose(x, perm), idx);       // idx dims, then the rest in order
  std::vector<int> back;
  const int k = idx.rank();
  for (int d = 0; d < ax; ++d) back.push_back(k + d);
  for (int d = 0; d < k; ++d) back.push_back(d);
  for (int d = ax + 1; d < x.rank(); ++d) back.push_back(k + d - 1);
  return ops::transpose(moved, back);
}

// ---- matmul: numpy's for rank >= 2 (leading dims broadcast)
void matmul_flags(const Args<Shape>& a) {
  for (const char* flag : {"transpose_a", "transpose_b", "adjoint_a", "adjoint_b", "a_is_sparse", "b_is_sparse"})
    if (a.get(flag, false)) a.fail(flag, "supported by kerascpp");
}
Shape matmul_shape(const Args<Shape>& a) {
  matmul_flags(a);
  const Shape x = a.value("x"), y = a.value("y");
  if (x.size() < 2 || y.size() < 2) a.fail("x", "of rank >= 2 with y of rank >= 2 (kerascpp's matmul)");
  Shape lead = ops::broadcast_shape(Shape(x.begin(), x.end() - 2), Shape(y.begin(), y.end() - 2));
  KCPP_CHECK(x.back() < 0 || y[y.size() - 2] < 0 || x.back() == y[y.size() - 2], ValueError, a.who(),
             ": incompatible shapes for matmul: ", shape_str(x), " and ", shape_str(y));
  lead.push_back(x[x.size() - 2]);
  lead.push_back(y.back());
  return lead;
}
Tensor matmul(const Args<Tensor>& a) {
  Tensor x = a.value("x"), y = a.value("y");
  if (y.rank() == 2) return ops::matmul(x, y);
  Shape lead = ops::broadcast_shape(Shape(x.shape().begin(), x.shape().end() - 2), Shape(y.shape().begin(), y.shape().end() - 2));
  auto batched = [&](const Tensor& t) {
    Shape full = lead;
    full.push_back(t.dim(-2));
    full.push_back(t.dim(-1));
    return ops::detail::broadcast_to(t, full).reshape({-1, t.dim(-2), t.dim(-1)});
  };
  Tensor out = ops::batch_matmul(batched(x), batched(y));
  lead.push_back(x.dim(-2));
  lead.push_back(y.dim(-1));
  return out.reshape(lead);
}

// ---- x[key]: the key as Keras 3 writes it ({"class_name": "__slice__", ...}) or tf_keras
// ({"start", "stop", "step"}), a tuple as a list.
std::vector<ops::Index> key_of(const Json& key, const std::string& who) {
  std::vector<ops::Index> out;
  const Json items = key.is_array() ? key : Json::array({key});
  for (const Json& k : items) {
    ops::Index i;
    if (k.is_null()) {
      i.kind = ops::Index::new_axis;
    } else if (k.is_number_integer()) {
      i.kind = ops::Index::integer;
      i.at = k.get<int64_t>();
    } else if (k.is_object() && k.value("class_name", std::string()) == "__ellipsis__") {
      i.kind = ops::Index::ellipsis;
    } else if (k.is_object() && (k.value("class_name", std::string()) == "__slice__" || k.contains("start"))) {
      const Json& s = k.contains("config") ? k["config"] : k;
      for (const char* f : {"start", "stop", "step"})
        KCPP_CHECK(s.value(f, Json()).is_null() || s[f].is_number_integer(), NotImplementedError, who,
                   " slices with a ", f, " that is not an int, which kerascpp does not support: ", k.dump().substr(0, 120));
      if (s.value("start", Json()).is_number_integer()) i.start = s["start"].get<int64_t>();
      if (s.value("stop", Json()).is_number_integer()) i.stop = s["stop"].get<int64_t>();
      if (s.value("step", Json()).is_number_integer()) i.step = s["step"].get<int64_t>();
    } else {
      KCPP_THROW(NotImplementedError, who, " indexes with ", k.dump().substr(0, 120),
                 ", which kerascpp does not support (integers, slices, None and ... only)");
    }
    out.push_back(i);
  }
  return out;
}
Shape get_item_shape(const Args<Shape>& a) { return ops::get_item_shape(a.value("x"), key_of(a.json("key"), a.who())); }
Tensor get_item(const Args<Tensor>& a) { return ops::get_item(a.value("x"), key_of(a.json("key"), a.who())); }

}  // namespace


std::vector<OpDef> array_ops() {
  std::vector<OpDef> defs = {
      OpDef{"ops.numpy.Reshape", "reshape", {"x", "newshape"}, {{"tensor", "x"}, {"shape", "newshape"}}, reshape_shape, reshape},
      OpDef{"ops.numpy.Transpose", "transpose|compat.v1.transpose", {"x", "axes", "conjugate"}, {{"a", "x"}, {"perm", "axes"}},
            transpose_shape, transpose},
      OpDef{"ops.numpy.ExpandDims", "expand_dims|compat.v1.expand_dims", {"x", "axis"}, {{"input", "x"}}, expand_dims_shape,
            reshaped<expand_dims_shape>},
      OpDef{"ops.numpy.Squeeze", "squeeze|compat.v1.squeeze", {"x", "axis"}, {{"input", "x"}}, squeeze_shape,
            reshaped<squeeze_shape>},
      OpDef{"ops.numpy.Concatenate", "concat", {"xs", "axis"}, {{"values", "xs"}}, concatenate_shape, concatenate},
      OpDef{"ops.numpy.Stack", "stack", {"xs", "axis"}, {{"values", "xs"}}, stack_shape, stack},
      OpDef{"ops.numpy.Tile", "tile", {"x", "repeats"}, {{"input", "x"}, {"multiples", "repeats"}}, tile_shape, tile},
      OpDef{"ops.numpy.Repeat", "repeat", {"x", "repeats", "axis"}, {{"input", "x"}}, repeat_shape, repeat},
      OpDef{"ops.numpy.Take", "gather|compat.v1.gather", {"x", "indices", "axis", "batch_dims"}, {{"params", "x"}}, take_shape,
            take},
      OpDef{"ops.numpy.Matmul", "linalg.matmul|matmul", {"x", "y", "transpose_a", "transpose_b", "adjoint_a", "adjoint_b",
                                                          "a_is_sparse", "b_is_sparse", "output_type"},
            {{"a", "x"}, {"b", "y"}}, matmul_shape, matmul},
      OpDef{"ops.numpy.GetItem", "__operators__.getitem", {"x", "key"}, {{"slice_spec", "key"}}, get_item_shape, get_item},
  };
  return defs;
}

}  // namespace kerascpp::layers::op_nodes
