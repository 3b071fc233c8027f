// Op nodes that split, join and re-view tensors: keras.ops split / array_split / hsplit / vsplit /
// dsplit / unstack / meshgrid / unravel_index (several outputs), hstack / vstack / dstack / append /
// broadcast_to / ravel / fliplr / flipud / rot90 / slice, the identities of real tensors (copy, conj,
// real) and their constants (imag, angle, isreal, empty_like, full_like), saturate_cast; tf_keras's
// tf.split / unstack / broadcast_to / slice / strided_slice / identity / image.flip_* / image.rot90.
// Built from differentiable ops (slice, get_item, concatenate, transpose), so their gradients come with
// them. Gathers and scatters: split_join_ops_gather.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

#include "layers/op_nodes/op_node.h"
#include "ops/grad_util.h"
#include "ops/tape.h"

namespace kerascpp::layers::op_nodes {

std::vector<OpDef> split_join_gather_ops();  // split_join_ops_gather.cpp

namespace {

int64_t product(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n = n < 0 || d < 0 ? -1 : n * d;
  return n;
}

// ---- split family: the sizes of the pieces along the axis (-1 where the axis's size is unknown).
// sections: an int (equal pieces; array_split: the first n % k one longer), else a list of split
// points (Keras 3 / numpy) or, for tf.split (sizes=true), of sizes with at most one -1.
template <class T>
std::vector<int64_t> piece_sizes(const Args<T>& a, const char* param, int64_t n, bool uneven, bool sizes) {
  const Json& j = a.json(param);
  if (j.is_number_integer()) {
    const int64_t k = j.get<int64_t>();
    if (k <= 0) a.fail(param, "not a positive number of sections");
    if (n < 0) return std::vector<int64_t>(k, -1);
    if (!uneven && n % k != 0) a.fail(param, "not a number of sections that divides the axis's size " + std::to_string(n));
    std::vector<int64_t> out(k, n / k);
    for (int64_t i = 0; i < n % k; ++i) ++out[i];
    return out;
  }
  if (uneven) a.fail(param, "not an int (kerascpp's array_split takes a number of sections)");
  const std::vector<int64_t> v = a.template get<std::vector<int64_t>>(param, {});
  if (v.empty()) a.fail(param, "not a non-empty list");
  std::vector<int64_t> out;
  if (sizes) {
    int64_t fill = -1, known = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == -1 && fill < 0) fill = static_cast<int64_t>(i);
      else if (v[i] < 0) a.fail(param, "not a list of sizes >= 0 with at most one -1");
      else known += v[i];
    }
    out = v;
    if (n >= 0 && fill >= 0) {
      if (known > n) a.fail(param, "not a list of sizes within the axis's size " + std::to_string(n));
      out[fill] = n - known;
    } else if (n >= 0 && known != n) {
      a.fail(param, "not a list of sizes that add up to the axis's size " + std::to_string(n));
    }
    return out;
  }
  int64_t at = 0;
  for (int64_t p : v) {
    if (p < at) a.fail(param, "not a non-decreasing list of split points >= 0");
    out.push_back(p - at);
    at = p;
  }
  if (n >= 0 && at > n) a.fail(param, "not a list of split points within the axis's size " + std::to_string(n));
  out.push_back(n < 0 ? -1 : n - at);
  return out;
}

// Which axis a split splits and how: Keras 3's Split / ArraySplit (axis), Hsplit (1, 0 for rank 1),
// Vsplit (0), Dsplit (2), tf.split (axis, sizes).
enum class Along { given, h, v, d, tf };
template <Along along, class T>
int split_axis(const Args<T>& a, int rank) {
  switch (along) {
    case Along::h:
      return rank == 1 ? 0 : axis_in(a, "x", 1, rank);
    case Along::v:
      return axis_in(a, "x", 0, rank);
    case Along::d:
      return axis_in(a, "x", 2, rank);
    default:
      return axis_in(a, "axis", a.template get<int>("axis", 0), rank);
  }
}
template <Along along, bool uneven>
std::vector<Shape> split_shapes(const Args<Shape>& a) {
  const Shape x = a.value("x");
  if (x.empty()) a.fail("x", "not a tensor of rank >= 1");
  const int ax = split_axis<along>(a, static_cast<int>(x.size()));
  const char* param = along == Along::tf ? "num_or_size_splits" : "indices_or_sections";
  std::vector<Shape> out;
  for (int64_t s : piece_sizes(a, param, x[ax], uneven, along == Along::tf)) {
    out.push_back(x);
    out.back()[ax] = s;
  }
  if (along == Along::tf && a.has("num") && a.get<int64_t>("num", 0) != static_cast<int64_t>(out.size()))
    a.fail("num", "not the number of pieces, " + std::to_string(out.size()));
  return out;
}
template <Along along, bool uneven>
std::vector<Tensor> split(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (x.rank() == 0) a.fail("x", "not a tensor of rank >= 1");
  const int ax = split_axis<along>(a, x.rank());
  const char* param = along == Along::tf ? "num_or_size_splits" : "indices_or_sections";
  std::vector<int64_t> begin(x.rank(), 0), size(x.shape().begin(), x.shape().end());
  std::vector<Tensor> out;
  for (int64_t s : piece_sizes(a, param, x.dim(ax), uneven, along == Along::tf)) {
    size[ax] = s;
    out.push_back(ops::slice(x, begin, size));
    begin[ax] += s;
  }
  return out;
}

// ---- unstack: x[..., i, ...] for each i along the axis.
template <class T>
int64_t unstack_count(const Args<T>& a, int64_t n) {
  const int64_t num = a.template get<int64_t>("num", n);
  if (num < 0) a.fail("num", "None while the axis's size is unknown");
  if (n >= 0 && num != n) a.fail("num", "not the axis's size " + std::to_string(n));
  return num;
}
std::vector<Shape> unstack_shapes(const Args<Shape>& a) {
  Shape x = a.value("x");
  const int ax = axis_in(a, "axis", a.get<int>("axis", 0), static_cast<int>(x.size()));
  const int64_t n = unstack_count(a, x[ax]);
  x.erase(x.begin() + ax);
  return std::vector<Shape>(n, x);
}
std::vector<Tensor> unstack(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const int ax = axis_in(a, "axis", a.get<int>("axis", 0), x.rank());
  std::vector<ops::Index> key(ax + 1);
  key[ax].kind = ops::Index::integer;
  std::vector<Tensor> out;
  for (int64_t i = 0, n = unstack_count(a, x.dim(ax)); i < n; ++i) {
    key[ax].at = i;
    out.push_back(ops::get_item(x, key));
  }
  return out;
}

// ---- meshgrid: each input flattened, laid along its own axis of the grid ("xy": the first two
// axes swapped, as numpy's and TensorFlow's).
constexpr const char* kGridInputs[] = {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"};
template <class T>
std::vector<T> grid_inputs(const Args<T>& a) {
  std::vector<T> xs;
  for (const char* n : kGridInputs)
    if (a.has(n)) xs.push_back(a.value(n));
  const std::string indexing = a.template get<std::string>("indexing", "xy");
  if (indexing != "xy" && indexing != "ij") a.fail("indexing", "not \"xy\" or \"ij\"");
  return xs;
}
template <class T>
bool xy(const Args<T>& a, size_t n) {
  return a.template get<std::string>("indexing", "xy") == "xy" && n > 1;
}
std::vector<Shape> meshgrid_shapes(const Args<Shape>& a) {
  const std::vector<Shape> xs = grid_inputs(a);
  Shape grid;
  for (const Shape& s : xs) grid.push_back(product(s));
  if (xy(a, xs.size())) std::swap(grid[0], grid[1]);
  return std::vector<Shape>(xs.size(), grid);
}
std::vector<Tensor> meshgrid(const Args<Tensor>& a) {
  const std::vector<Tensor> xs = grid_inputs(a);
  const bool swap = xy(a, xs.size());
  Shape grid;
  for (const Tensor& x : xs) grid.push_back(x.size());
  if (swap) std::swap(grid[0], grid[1]);
  std::vector<Tensor> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    Shape along(xs.size(), 1);
    along[swap && i < 2 ? 1 - i : i] = xs[i].size();
    out.push_back(broadcast(xs[i].reshape(along), grid));
  }
  return out;
}

// ---- unravel_index: the coordinates of flat indices in an array of `shape` (integers, no gradient).
// Keras's TensorFlow backend orders the dims wrongly for indices of any rank but 1 (its result differs
// from numpy's and JAX's: index 5 of shape (2, 3) is (2, 1)), so kerascpp runs rank 1 only, where the
// backends agree.
template <class T>
std::vector<int64_t> unravel_dims(const Args<T>& a, size_t index_rank) {
  if (index_rank != 1)
    KCPP_THROW(NotImplementedError, a.who(), ": argument 'indices' has rank ", index_rank,
               "; kerascpp runs unravel_index for indices of rank 1 only (for other ranks Keras's "
               "TensorFlow backend computes other coordinates than numpy's and JAX's)");
  const std::vector<int64_t> dims = a.template get<std::vector<int64_t>>("shape", {});
  if (dims.empty()) a.fail("shape", "not a non-empty list of dims");
  for (int64_t d : dims)
    if (d <= 0) a.fail("shape", "not a list of positive dims");
  return dims;
}
std::vector<Shape> unravel_shapes(const Args<Shape>& a) {
  const Shape idx = a.value("indices");
  return std::vector<Shape>(unravel_dims(a, idx.size()).size(), idx);
}
std::vector<Tensor> unravel_index(const Args<Tensor>& a) {
  const Tensor idx = a.value("indices");
  const std::vector<int64_t> dims = unravel_dims(a, idx.rank());
  std::vector<Tensor> out;
  for (size_t d = 0; d < dims.size(); ++d) out.push_back(Tensor::empty(idx.shape()));
  for (int64_t i = 0; i < idx.size(); ++i) {
    auto v = static_cast<int64_t>(idx.data<float>()[i]);
    for (size_t d = dims.size(); d-- > 0;) {  // TensorFlow's floor mod and floor division
      const int64_t m = ((v % dims[d]) + dims[d]) % dims[d];
      out[d].data<float>()[i] = static_cast<float>(m);
      v = (v - m) / dims[d];
    }
  }
  return out;
}

// ---- hstack / vstack / dstack / append: concatenations.
enum class Stack { h, v, d };
template <Stack how>
Shape stacked(const Shape& s) {  // dstack's view of an input of rank < 3
  if (how != Stack::d || s.size() >= 3) return s;
  if (s.empty()) return {1, 1, 1};
  if (s.size() == 1) return {1, s[0], 1};
  return {s[0], s[1], 1};
}
template <Stack how, class T>
int stack_axis(const Args<T>& a, size_t rank) {
  const int ax = how == Stack::h ? (rank == 1 ? 0 : 1) : how == Stack::v ? 0 : 2;
  if (static_cast<int>(rank) <= ax) a.fail("xs", "not a list of tensors of rank >= " + std::to_string(ax + 1));
  return ax;
}
template <Stack how>
Shape stack_shape(const Args<Shape>& a) {
  const std::vector<Shape> xs = a.values("xs");
  Shape out = stacked<how>(xs[0]);
  const int ax = stack_axis<how>(a, out.size());
  out[ax] = 0;
  for (const Shape& x : xs) {
    const Shape s = stacked<how>(x);
    if (s.size() != out.size()) a.fail("xs", "not a list of tensors of one rank");
    for (size_t d = 0; d < s.size(); ++d)
      if (static_cast<int>(d) != ax && s[d] >= 0 && out[d] >= 0 && s[d] != out[d])
        a.fail("xs", "not a list of tensors whose shapes agree off the joined axis");
    out[ax] = out[ax] < 0 || s[ax] < 0 ? -1 : out[ax] + s[ax];
  }
  return out;
}
template <Stack how>
Tensor stack(const Args<Tensor>& a) {
  std::vector<Tensor> xs = a.values("xs");
  for (Tensor& x : xs) x = x.reshape(stacked<how>(x.shape()));
  return ops::concatenate(xs, stack_axis<how>(a, xs[0].rank()));
}
Shape append_shape(const Args<Shape>& a) {
  Shape x = a.value("x1");
  const Shape y = a.value("x2");
  if (!a.has("axis")) {
    const int64_t n = product(x), m = product(y);
    return {n < 0 || m < 0 ? -1 : n + m};
  }
  if (x.size() != y.size()) a.fail("x2", "not of x1's rank " + std::to_string(x.size()));
  const int ax = axis_in(a, "axis", a.get<int>("axis", 0), static_cast<int>(x.size()));
  x[ax] = x[ax] < 0 || y[ax] < 0 ? -1 : x[ax] + y[ax];
  return x;
}
Tensor append(const Args<Tensor>& a) {
  const Tensor x = a.value("x1"), y = a.value("x2");
  if (!a.has("axis")) return ops::concatenate({x.reshape({x.size()}), y.reshape({y.size()})}, 0);
  if (x.rank() != y.rank()) a.fail("x2", "not of x1's rank " + std::to_string(x.rank()));
  return ops::concatenate({x, y}, axis_in(a, "axis", a.get<int>("axis", 0), x.rank()));
}

// ---- broadcast_to / ravel. The shape may hold tensors the graph computes (tf.shape(y)): their dims are
// unknown until the model runs.
template <class T>
Shape broadcast_target(const Args<T>& a, const Shape& x) {
  const std::vector<int64_t> target = a.ints("shape");
  if (target.size() < x.size()) a.fail("shape", "not a shape of rank >= the input's " + std::to_string(x.size()));
  for (int64_t t : target)
    if (t < 0 && t != kComputed) a.fail("shape", "not a shape of dims >= 0");
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t d = x[x.size() - 1 - i], t = target[target.size() - 1 - i];
    if (t != kComputed && d >= 0 && d != 1 && d != t) a.fail("shape", "not a shape the input " + shape_str(x) + " broadcasts to");
  }
  Shape out(target.begin(), target.end());
  for (int64_t& d : out)
    if (d == kComputed) d = -1;
  return out;
}
Shape broadcast_to_shape(const Args<Shape>& a) { return broadcast_target(a, a.value("x")); }
Tensor broadcast_to(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  return broadcast(x, broadcast_target(a, x.shape()));
}
Shape ravel_shape(const Args<Shape>& a) { return {product(a.value("x"))}; }
Tensor ravel(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  return x.reshape({x.size()});
}

// ---- flips and rot90 (numpy's: flip along axes[1], then swap the two axes; k mod 4 times).
Tensor reversed(const Tensor& x, std::initializer_list<int> axes) {
  std::vector<ops::Index> key(x.rank());
  for (int d : axes) key[d].step = -1;
  return ops::get_item(x, key);
}
// Which axes an image function of tf_keras works on: the last two before the channels, of one image
// (rank 3) or a batch (rank 4).
template <class T>
int image_axis(const Args<T>& a, size_t rank, int from_end) {
  if (rank != 3 && rank != 4) a.fail("image", "not an image of rank 3 or a batch of rank 4");
  return static_cast<int>(rank) - from_end;
}
// The axis flipped: fliplr 1, flipud 0, tf.image.flip_left_right the width, flip_up_down the height.
enum class Flip { lr, ud, image_lr, image_ud };
template <Flip f, class T>
int flip_axis(const Args<T>& a, size_t rank) {
  if (f == Flip::image_lr) return image_axis(a, rank, 2);
  if (f == Flip::image_ud) return image_axis(a, rank, 3);
  const size_t ax = f == Flip::lr ? 1 : 0;
  if (rank <= ax) a.fail("x", "not a tensor of rank >= " + std::to_string(ax + 1));
  return static_cast<int>(ax);
}
template <Flip f>
Shape flip_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  flip_axis<f>(a, x.size());
  return x;
}
template <Flip f>
Tensor flip(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  return reversed(x, {flip_axis<f>(a, x.rank())});
}
// The plane of rotation and k mod 4: Keras 3's axes (default (0, 1)); tf.image.rot90's image axes.
template <bool image, class T>
std::pair<int, int> rot_axes(const Args<T>& a, size_t rank, int* k) {
  *k = static_cast<int>(((a.template get<int64_t>("k", 1) % 4) + 4) % 4);
  if (image) return {image_axis(a, rank, 3), image_axis(a, rank, 2)};
  if (rank < 2) a.fail("x", "not a tensor of rank >= 2");
  const std::vector<int> axes = a.has("axes") ? a.template get<std::vector<int>>("axes", {}) : std::vector<int>{0, 1};
  if (axes.size() != 2) a.fail("axes", "not two axes");
  const int r = static_cast<int>(rank), p = axis_in(a, "axes", axes[0], r), q = axis_in(a, "axes", axes[1], r);
  if (p == q) a.fail("axes", "not two different axes");
  return {p, q};
}
// Keras's TensorFlow backend scrambles a half turn of a plane that is not square (it reshapes the
// quarter-turned plane to the unturned dims); kerascpp runs the turns where the backends agree.
template <bool image, class T>
void check_half_turn(const Args<T>& a, const Shape& x, int k, int p, int q) {
  if (!image && k == 2 && x[p] != x[q])
    KCPP_THROW(NotImplementedError, a.who(), ": argument 'k' makes a half turn of a plane of ", x[p] < 0 ? "unknown" : std::to_string(x[p]),
               " x ", x[q] < 0 ? "unknown" : std::to_string(x[q]), " values; kerascpp runs it on square planes only (for others "
               "Keras's TensorFlow backend computes other values than numpy's and JAX's)");
}
template <bool image>
Shape rot90_shape(const Args<Shape>& a) {
  Shape x = a.value("x");
  int k = 0;
  const auto [p, q] = rot_axes<image>(a, x.size(), &k);
  check_half_turn<image>(a, x, k, p, q);
  if (k % 2 == 1) std::swap(x[p], x[q]);
  return x;
}
template <bool image>
Tensor rot90(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  int k = 0;
  const auto [p, q] = rot_axes<image>(a, x.rank(), &k);
  check_half_turn<image>(a, x.shape(), k, p, q);
  if (k == 0) return x;
  if (k == 2) return reversed(x, {p, q});
  std::vector<int> perm(x.rank());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[p], perm[q]);
  return k == 1 ? ops::transpose(reversed(x, {q}), perm) : reversed(ops::transpose(x, perm), {q});
}

// ---- slice (Keras 3's start_indices / shape; tf.slice's begin / size): a size of -1 takes the rest.
template <class T>
std::pair<std::vector<int64_t>, std::vector<int64_t>> window(const Args<T>& a, const Shape& x) {
  std::vector<int64_t> begin = a.template get<std::vector<int64_t>>("start_indices", {});
  std::vector<int64_t> size = a.template get<std::vector<int64_t>>("shape", {});
  if (begin.size() != x.size()) a.fail("start_indices", "not one start per axis of the input's " + std::to_string(x.size()));
  if (size.size() != x.size()) a.fail("shape", "not one size per axis of the input's " + std::to_string(x.size()));
  for (size_t d = 0; d < x.size(); ++d) {
    if (begin[d] < 0 || (x[d] >= 0 && begin[d] > x[d])) a.fail("start_indices", "not a list of starts inside the input " + shape_str(x));
    if (size[d] == -1) size[d] = x[d] < 0 ? -1 : x[d] - begin[d];
    else if (size[d] < 0 || (x[d] >= 0 && begin[d] + size[d] > x[d]))
      a.fail("shape", "not a window inside the input " + shape_str(x) + " from start_indices");
  }
  return {begin, size};
}
Shape slice_shape(const Args<Shape>& a) {
  const auto w = window(a, a.value("inputs"));
  return Shape(w.second.begin(), w.second.end());
}
Tensor slice(const Args<Tensor>& a) {
  const Tensor x = a.value("inputs");
  const auto [begin, size] = window(a, x.shape());
  return ops::slice(x, begin, size);
}

// ---- tf.strided_slice: begin / end / strides with their bit masks, as a numpy key.
template <class T>
std::vector<ops::Index> strided_key(const Args<T>& a) {
  const std::vector<int64_t> begin = a.template get<std::vector<int64_t>>("begin", {});
  const std::vector<int64_t> end = a.template get<std::vector<int64_t>>("end", {});
  const std::vector<int64_t> strides = a.has("strides") ? a.template get<std::vector<int64_t>>("strides", {})
                                                        : std::vector<int64_t>(begin.size(), 1);
  if (end.size() != begin.size()) a.fail("end", "not as long as `begin`");
  if (strides.size() != begin.size()) a.fail("strides", "not as long as `begin`");
  const auto mask = [&](const char* n) { return a.template get<int64_t>(n, 0); };
  const int64_t bm = mask("begin_mask"), em = mask("end_mask"), ell = mask("ellipsis_mask"), na = mask("new_axis_mask"),
                sh = mask("shrink_axis_mask");
  std::vector<ops::Index> key(begin.size());
  for (size_t i = 0; i < begin.size(); ++i) {
    const int64_t bit = int64_t{1} << i;
    ops::Index& k = key[i];
    if (ell & bit) {
      k.kind = ops::Index::ellipsis;
    } else if (na & bit) {
      k.kind = ops::Index::new_axis;
    } else if (sh & bit) {
      k.kind = ops::Index::integer;
      k.at = begin[i];
    } else {
      if (strides[i] == 0) a.fail("strides", "not a list of non-zero strides");
      k.step = strides[i];
      if (!(bm & bit)) k.start = begin[i];
      if (!(em & bit)) k.stop = end[i];
    }
  }
  return key;
}
Shape strided_slice_shape(const Args<Shape>& a) { return ops::get_item_shape(a.value("x"), strided_key(a)); }
Tensor strided_slice(const Args<Tensor>& a) { return ops::get_item(a.value("x"), strided_key(a)); }

// ---- real tensors: copy / conj / real / identity are x; imag and empty_like zeros; angle 0 or pi
// (TensorFlow's where(x < 0, pi, 0)); isreal ones; full_like the fill value.
Tensor identity(const Args<Tensor>& a) { return a.value("x"); }
Tensor zeros_of_x(const Args<Tensor>& a) { return ops::detail::filled(a.value("x").shape(), 0.f); }
Tensor ones_of_x(const Args<Tensor>& a) { return ops::detail::filled(a.value("x").shape(), 1.f); }
Tensor empty_like(const Args<Tensor>& a) {
  if (a.has("dtype")) cast_to(a, Tensor::zeros({}), "dtype");  // a dtype kerascpp knows
  return ops::detail::filled(a.value("x").shape(), 0.f);
}
Tensor angle(const Args<Tensor>& a) {
  return ops::map_unary("angle", a.value("x"), [](float v) { return v < 0 ? std::numbers::pi_v<float> : 0.f; }, nullptr);
}
Tensor full_like(const Args<Tensor>& a) {
  const Tensor x = a.value("x"), fill = a.value("fill_value");
  if (ops::broadcast_shape(fill.shape(), x.shape()) != x.shape()) a.fail("fill_value", "not broadcastable to the input " + shape_str(x.shape()));
  const Tensor y = broadcast(fill, x.shape());
  return a.has("dtype") ? cast_to(a, y, "dtype") : y;
}

// ---- saturate_cast: clipped to the dtype's range (as Keras: the nearest float32 inside it), then cast.
Tensor clip(const Tensor& x, float lo, float hi) {
  Tensor y = Tensor::empty(x.shape());
  for (int64_t i = 0; i < x.size(); ++i) {
    const float v = x.data<float>()[i];
    y.data<float>()[i] = std::isnan(v) ? v : std::clamp(v, lo, hi);
  }
  if (ops::Recorder* r = ops::tape_for({&x}))
    r->record("saturate_cast", {x}, y, [x, lo, hi](const Tensor& dy) {
      Tensor d = Tensor::empty(x.shape());
      for (int64_t i = 0; i < x.size(); ++i) {
        const float v = x.data<float>()[i];
        d.data<float>()[i] = v >= lo && v <= hi ? dy.data<float>()[i] : 0.f;
      }
      return ops::Grads{d};
    });
  return y;
}
Tensor saturate_cast(const Args<Tensor>& a) {
  const std::string d = a.get<std::string>("dtype", "");
  const float big = std::numeric_limits<float>::max();
  float lo = -big, hi = big;
  if (d == "int8") lo = -128.f, hi = 127.f;
  else if (d == "uint8") lo = 0.f, hi = 255.f;
  else if (d == "int32") lo = -2147483648.f, hi = 2147483520.f;
  else if (d == "int64") lo = -9223372036854775808.f, hi = 9223371487098961920.f;
  else if (d == "float16") lo = -65504.f, hi = 65504.f;
  else if (d == "bfloat16") lo = -3.38953139e38f, hi = 3.38953139e38f;
  else if (d == "bool") lo = 0.f, hi = 1.f;
  else if (d != "float32" && d != "float64") a.fail("dtype", "not a dtype kerascpp knows");
  const Tensor clipped = clip(a.value("x"), lo, hi);
  return cast_to(a, clipped, "dtype");
}

}  // namespace

std::vector<OpDef> split_join_ops() {
  const std::vector<std::string> split_params = {"x", "indices_or_sections", "axis"};
  auto several = [](const char* keras, const char* tf, std::vector<std::string> params,
                    std::vector<std::pair<std::string, std::string>> tf_names, std::vector<Shape> (*shapes)(const Args<Shape>&),
                    std::vector<Tensor> (*calls)(const Args<Tensor>&)) {
    return OpDef{keras, tf, std::move(params), std::move(tf_names), nullptr, nullptr, shapes, calls};
  };
  std::vector<OpDef> defs = {
      several("ops.numpy.Split", nullptr, split_params, {}, split_shapes<Along::given, false>, split<Along::given, false>),
      several("ops.numpy.ArraySplit", nullptr, split_params, {}, split_shapes<Along::given, true>, split<Along::given, true>),
      several("ops.numpy.Hsplit", nullptr, split_params, {}, split_shapes<Along::h, false>, split<Along::h, false>),
      several("ops.numpy.Vsplit", nullptr, split_params, {}, split_shapes<Along::v, false>, split<Along::v, false>),
      several("ops.numpy.Dsplit", nullptr, split_params, {}, split_shapes<Along::d, false>, split<Along::d, false>),
      several(nullptr, "split", {"x", "num_or_size_splits", "axis", "num"}, {{"value", "x"}}, split_shapes<Along::tf, false>,
              split<Along::tf, false>),
      several("ops.core.Unstack", "unstack", {"x", "num", "axis"}, {{"value", "x"}}, unstack_shapes, unstack),
      several("ops.numpy.Meshgrid", nullptr, {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "indexing"}, {}, meshgrid_shapes,
              meshgrid),
      several("ops.numpy.UnravelIndex", nullptr, {"indices", "shape"}, {}, unravel_shapes, unravel_index),
      OpDef{"ops.numpy.Hstack", nullptr, {"xs"}, {}, stack_shape<Stack::h>, stack<Stack::h>},
      OpDef{"ops.numpy.Vstack", nullptr, {"xs"}, {}, stack_shape<Stack::v>, stack<Stack::v>},
      OpDef{"ops.numpy.Dstack", nullptr, {"xs"}, {}, stack_shape<Stack::d>, stack<Stack::d>},
      OpDef{"ops.numpy.Append", nullptr, {"x1", "x2", "axis"}, {}, append_shape, append},
      OpDef{"ops.numpy.BroadcastTo", "broadcast_to", {"x", "shape"}, {{"input", "x"}}, broadcast_to_shape, broadcast_to},
      OpDef{"ops.numpy.Ravel", nullptr, {"x"}, {}, ravel_shape, ravel},
      OpDef{"ops.numpy.Fliplr", nullptr, {"x"}, {}, flip_shape<Flip::lr>, flip<Flip::lr>},
      OpDef{"ops.numpy.Flipud", nullptr, {"x"}, {}, flip_shape<Flip::ud>, flip<Flip::ud>},
      OpDef{nullptr, "image.flip_left_right", {"x"}, {{"image", "x"}}, flip_shape<Flip::image_lr>, flip<Flip::image_lr>},
      OpDef{nullptr, "image.flip_up_down", {"x"}, {{"image", "x"}}, flip_shape<Flip::image_ud>, flip<Flip::image_ud>},
      OpDef{"ops.numpy.Rot90", nullptr, {"x", "k", "axes"}, {}, rot90_shape<false>, rot90<false>},
      OpDef{nullptr, "image.rot90", {"x", "k"}, {{"image", "x"}}, rot90_shape<true>, rot90<true>},
      OpDef{"ops.core.Slice", "slice", {"inputs", "start_indices", "shape"},
            {{"input_", "inputs"}, {"begin", "start_indices"}, {"size", "shape"}}, slice_shape, slice},
      OpDef{nullptr, "strided_slice",
            {"x", "begin", "end", "strides", "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"},
            {{"input_", "x"}}, strided_slice_shape, strided_slice},
      OpDef{"ops.numpy.Copy", "identity", {"x"}, {{"input", "x"}}, same_shape, identity},
      OpDef{"ops.numpy.Conjugate", "math.conj|conj", {"x"}, {}, same_shape, identity},
      OpDef{"ops.numpy.Conj", nullptr, {"x"}, {}, same_shape, identity},
      OpDef{"ops.numpy.Real", "math.real|real", {"x"}, {{"input", "x"}}, same_shape, identity},
      OpDef{"ops.numpy.Imag", "math.imag|imag", {"x"}, {{"input", "x"}}, same_shape, zeros_of_x},
      OpDef{"ops.numpy.Angle", "math.angle|angle", {"x"}, {{"input", "x"}}, same_shape, angle},
      OpDef{"ops.numpy.Isreal", nullptr, {"x"}, {}, same_shape, ones_of_x},
      OpDef{"ops.numpy.EmptyLike", nullptr, {"x", "dtype"}, {}, same_shape, empty_like},
      OpDef{"ops.numpy.FullLike", nullptr, {"x", "fill_value", "dtype"}, {}, same_shape, full_like},
      OpDef{"ops.core.SaturateCast", nullptr, {"x", "dtype"}, {}, same_shape, saturate_cast},
  };
  for (OpDef& d : split_join_gather_ops()) defs.push_back(std::move(d));
  return defs;
}

}  // namespace kerascpp::layers::op_nodes
