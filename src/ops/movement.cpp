// Data movement for any dtype: concatenate, transpose, tile.
#include "kernels/movement.h"

#include <algorithm>

#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {

// xs[i]: equal shapes except along axis -> the concatenation along axis.
Tensor concatenate(const std::vector<Tensor>& xs, int axis) {
  KCPP_CHECK(!xs.empty(), ValueError, "concatenate: Expected at least one tensor. Received: 0 tensors");
  for (const Tensor& x : xs) detail::check_defined("concatenate", x, "xs[i]");
  const Tensor& first = xs[0];
  KCPP_CHECK(first.rank() >= 1, ValueError,
             "concatenate: Cannot concatenate scalars (rank 0). Received: shape=", shape_str(first.shape()));
  const int ax = detail::normalize_axis_for("concatenate", axis, first.rank());
  Shape out = first.shape();
  out[ax] = 0;
  std::vector<int64_t> axis_dims;
  std::vector<const void*> ptrs;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    KCPP_CHECK(x.dtype() == first.dtype(), ValueError,
               "concatenate: All tensors must have the same dtype. Received: ", dtype_name(first.dtype()),
               " and ", dtype_name(x.dtype()), " (tensor ", i, ")");
    bool same = x.rank() == first.rank();
    for (int d = 0; same && d < x.rank(); ++d) same = d == ax || x.dim(d) == first.dim(d);
    KCPP_CHECK(same, ValueError, "concatenate: All tensors must have the same shape except along axis ", ax,
               ". Received: shapes ", shape_str(first.shape()), " and ", shape_str(x.shape()), " (tensor ", i,
               ")");
    out[ax] += x.dim(ax);
    axis_dims.push_back(x.dim(ax));
    ptrs.push_back(x.raw_data());
  }
  Tensor y = Tensor::empty(out, first.dtype());
  const detail::AxisSplit s = detail::split_axis(out, ax);
  kernels::concatenate(ptrs.data(), axis_dims.data(), static_cast<int>(xs.size()), y.raw_data(),
                       dtype_size(first.dtype()), s.outer, s.inner);
  if (Recorder* r = first.dtype() == DType::float32 ? tape_for(xs) : nullptr)
    r->record("concatenate", xs, y, [ax, axis_dims](const Tensor& dy) {
      Grads g;
      std::vector<int64_t> begin(dy.rank(), 0);
      Shape size = dy.shape();
      for (int64_t d : axis_dims) {
        size[ax] = d;
        g.push_back(slice(dy, begin, size));
        begin[ax] += d;
      }
      return g;
    });
  return y;
}

// perm: a permutation of the axes (negative axes allowed); y.shape[d] = x.shape[perm[d]].
Tensor transpose(const Tensor& x, const std::vector<int>& perm) {
  detail::check_defined("transpose", x, "x");
  const int rank = x.rank();
  std::vector<int> p(perm);
  std::vector<bool> seen(rank, false);
  bool ok = static_cast<int>(p.size()) == rank;
  for (size_t d = 0; ok && d < p.size(); ++d) {
    if (p[d] < 0) p[d] += rank;
    ok = p[d] >= 0 && p[d] < rank && !seen[p[d]];
    if (ok) seen[p[d]] = true;
  }
  KCPP_CHECK(ok, ValueError, "transpose: perm must be a permutation of the ", rank,
             " axes of x. Received: perm=", perm, " for x.shape=", shape_str(x.shape()));
  KCPP_CHECK(rank <= kernels::kMaxRank, NotImplementedError, "transpose: tensors of rank above ",
             kernels::kMaxRank, " are not supported. Received: rank=", rank);
  Shape out(rank);
  for (int d = 0; d < rank; ++d) out[d] = x.dim(p[d]);
  Tensor y = Tensor::empty(out, x.dtype());
  kernels::transpose(x.raw_data(), y.raw_data(), dtype_size(x.dtype()), x.shape().data(), p.data(), rank);
  if (Recorder* r = x.dtype() == DType::float32 ? tape_for({&x}) : nullptr)
    r->record("transpose", {x}, y, [p, rank](const Tensor& dy) {
      std::vector<int> inverse(rank);
      for (int d = 0; d < rank; ++d) inverse[p[d]] = d;
      return Grads{transpose(dy, inverse)};
    });
  return y;
}

// numpy.tile: reps shorter than the rank is padded with leading 1s, longer prepends 1s to the shape.
Tensor tile(const Tensor& x, const std::vector<int64_t>& reps) {
  detail::check_defined("tile", x, "x");
  for (int64_t r : reps)
    KCPP_CHECK(r >= 0, ValueError, "tile: reps must be non-negative. Received: reps=", reps);
  const size_t rank = std::max(reps.size(), static_cast<size_t>(x.rank()));
  Shape in(rank, 1);
  std::vector<int64_t> r(rank, 1);
  std::copy(x.shape().begin(), x.shape().end(), in.end() - x.rank());
  std::copy(reps.begin(), reps.end(), r.end() - reps.size());
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) out[d] = in[d] * r[d];
  Tensor y = Tensor::empty(out, x.dtype());
  kernels::tile(x.raw_data(), y.raw_data(), dtype_size(x.dtype()), in.data(), r.data(),
                static_cast<int>(rank));
  if (Recorder* rec = x.dtype() == DType::float32 ? tape_for({&x}) : nullptr)
    rec->record("tile", {x}, y, [x, in, r, rank](const Tensor& dy) {
      // dy as (r0, d0, r1, d1, ...): the copies along each rN are summed.
      Shape split;
      std::vector<int> copies;
      for (size_t d = 0; d < rank; ++d) {
        copies.push_back(static_cast<int>(split.size()));
        split.push_back(r[d]);
        split.push_back(in[d]);
      }
      return Grads{detail::sum_axes(dy.reshape(split), copies).reshape(x.shape())};
    });
  return y;
}

}  // namespace kerascpp::ops
