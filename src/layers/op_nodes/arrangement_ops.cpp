// Op nodes that rearrange a tensor's values: keras.ops moveaxis / swapaxes (transposes), flip (a
// reversed slice; tf.reverse), roll (two slices joined; tf.roll), tril / triu (the lower / upper
// triangle of the last two axes, the rest zeroed). Built from differentiable ops, so their gradients
// come with them.
#include <numeric>

#include "layers/op_nodes/op_node.h"
#include "ops/ops.h"

namespace kerascpp::layers::op_nodes {
namespace {

// ---- moveaxis / swapaxes: the permutation they make.
template <class T>
std::vector<int> moveaxis_perm(const Args<T>& a, int r) {
  std::vector<int> src = a.axes("source"), dst = a.axes("destination");
  if (src.size() != dst.size()) a.fail("destination", "not as many axes as `source`");
  std::vector<bool> moved(r, false);
  for (size_t i = 0; i < src.size(); ++i) {
    src[i] = axis_in(a, "source", src[i], r), dst[i] = axis_in(a, "destination", dst[i], r);
    if (moved[src[i]]) a.fail("source", "not a list of distinct axes");
    moved[src[i]] = true;
  }
  std::vector<int> rest, perm(r, -1);
  for (int d = 0; d < r; ++d)
    if (!moved[d]) rest.push_back(d);
  for (size_t i = 0; i < src.size(); ++i) {
    if (perm[dst[i]] != -1) a.fail("destination", "not a list of distinct axes");
    perm[dst[i]] = src[i];
  }
  for (int& p : perm)
    if (p == -1) p = rest.front(), rest.erase(rest.begin());
  return perm;
}
template <class T>
std::vector<int> swapaxes_perm(const Args<T>& a, int r) {
  std::vector<int> perm(r);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[axis_in(a, "axis1", a.get("axis1", 0), r)], perm[axis_in(a, "axis2", a.get("axis2", 0), r)]);
  return perm;
}
template <std::vector<int> (*P)(const Args<Shape>&, int)>
Shape permuted_shape(const Args<Shape>& a) {
  const Shape x = a.value("x");
  Shape out;
  for (int d : P(a, static_cast<int>(x.size()))) out.push_back(x[d]);
  return out;
}
template <std::vector<int> (*P)(const Args<Tensor>&, int)>
Tensor permuted(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  return ops::transpose(x, P(a, x.rank()));
}

// ---- flip: every given axis (all when None) read backwards.
Tensor flip(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  std::vector<int> axes = a.axes("axis");
  if (axes.empty()) axes.resize(x.rank()), std::iota(axes.begin(), axes.end(), 0);
  std::vector<ops::Index> key(x.rank());
  for (int d : axes) key[axis_in(a, "axis", d, x.rank())].step = -1;
  return ops::get_item(x, key);
}

// ---- roll: numpy's, each axis shifted by its shift (None: the flattened tensor).
Tensor roll_axis(const Tensor& x, int64_t shift, int axis) {
  const int64_t n = x.dim(axis);
  if (n == 0) return x;
  const int64_t s = ((shift % n) + n) % n;
  if (s == 0) return x;
  std::vector<int64_t> begin(x.rank(), 0), size(x.shape().begin(), x.shape().end());
  begin[axis] = n - s, size[axis] = s;
  const Tensor tail = ops::slice(x, begin, size);
  begin[axis] = 0, size[axis] = n - s;
  return ops::concatenate({tail, ops::slice(x, begin, size)}, axis);
}
Tensor roll(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  const std::vector<int> shifts = a.axes("shift");
  if (!a.has("axis")) {
    if (shifts.size() != 1) a.fail("shift", "not one integer when `axis` is None");
    return roll_axis(x.reshape({x.size()}), shifts[0], 0).reshape(x.shape());
  }
  const std::vector<int> axes = a.axes("axis");
  if (shifts.size() != axes.size() && shifts.size() != 1) a.fail("shift", "not one integer per axis");
  Tensor y = x;
  for (size_t i = 0; i < axes.size(); ++i)
    y = roll_axis(y, shifts[shifts.size() == 1 ? 0 : i], axis_in(a, "axis", axes[i], x.rank()));
  return y;
}

// ---- tril / triu: x times the triangle's 0 / 1 mask over the last two axes.
template <bool lower>
Tensor triangle(const Args<Tensor>& a) {
  const Tensor x = a.value("x");
  if (x.rank() < 2) a.fail("x", "not a tensor of rank 2 or more");
  const int64_t m = x.dim(-2), n = x.dim(-1), k = a.get("k", int64_t{0});
  Tensor mask = Tensor::empty({m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) mask.data<float>()[i * n + j] = (lower ? j - i <= k : j - i >= k) ? 1.f : 0.f;
  return ops::binary(ops::BinaryOp::multiply, x, mask);
}
Shape rank2_same_shape(const Args<Shape>& a) {
  expect_rank(a, a.value("x"), 2, "x");
  return a.value("x");
}

}  // namespace

std::vector<OpDef> arrangement_ops() {
  return {
      OpDef{"ops.numpy.Moveaxis", nullptr, {"x", "source", "destination"}, {}, permuted_shape<moveaxis_perm<Shape>>,
            permuted<moveaxis_perm<Tensor>>},
      OpDef{"ops.numpy.Swapaxes", nullptr, {"x", "axis1", "axis2"}, {}, permuted_shape<swapaxes_perm<Shape>>,
            permuted<swapaxes_perm<Tensor>>},
      OpDef{"ops.numpy.Flip", "reverse|reverse_v2", {"x", "axis"}, {{"tensor", "x"}}, same_shape, flip},
      OpDef{"ops.numpy.Roll", "roll|manip.roll", {"x", "shift", "axis"}, {{"input", "x"}}, same_shape, roll},
      OpDef{"ops.numpy.Tril", nullptr, {"x", "k"}, {}, rank2_same_shape, triangle<true>},
      OpDef{"ops.numpy.Triu", nullptr, {"x", "k"}, {}, rank2_same_shape, triangle<false>},
  };
}

}  // namespace kerascpp::layers::op_nodes
