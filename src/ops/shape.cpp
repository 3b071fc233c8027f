// Shape inference shared by the ops: broadcasting, axes, argument checks.
#include <algorithm>

#include "ops/checks.h"
#include "ops/ops.h"

namespace kerascpp::ops {
namespace {

// numpy / keras.src.ops.operation_utils.broadcast_shapes, with -1 standing for None: None against 1
// stays None, None against d is d.
bool try_broadcast(const Shape& a, const Shape& b, Shape* out) {
  const size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right; missing leading dims count as 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1)
      result[i] = da;
    else if (da == 1)
      result[i] = db;
    else if (da < 0)
      result[i] = db;
    else if (db < 0)
      result[i] = da;
    else
      return false;
  }
  *out = std::move(result);
  return true;
}

}  // namespace

Shape broadcast_shape(const Shape& a, const Shape& b) {
  Shape out;
  KCPP_CHECK(try_broadcast(a, b, &out), ValueError, "Cannot broadcast shapes ", shape_str(a), " and ",
             shape_str(b));
  return out;
}

int normalize_axis(int axis, int rank) {
  KCPP_CHECK(
      axis >= -rank &&
              axis<rank, ValueError, "axis ", axis, " is out of bounds for a tensor of rank ", rank, rank> 0
          ? ::kerascpp::detail::concat(" (expected -", rank, " <= axis < ", rank, ")")
          : std::string());
  return axis < 0 ? axis + rank : axis;
}

namespace detail {

void check_defined(const char* op, const Tensor& t, const char* name) {
  KCPP_CHECK(t.defined(), ValueError, op, ": `", name, "` is an undefined (empty) Tensor");
}

void check_float32(const char* op, const Tensor& t, const char* name) {
  check_defined(op, t, name);
  KCPP_CHECK(t.dtype() == DType::float32, ValueError, op, ": Only float32 is supported. Received: ", name,
             ".dtype=", dtype_name(t.dtype()));
}

int normalize_axis_for(const char* op, int axis, int rank) {
  try {
    return normalize_axis(axis, rank);
  } catch (const ValueError& e) {
    KCPP_THROW(ValueError, op, ": ", e.what());
  }
}

Shape broadcast_shape_for(const char* op, const Shape& a, const Shape& b) {
  Shape out;
  KCPP_CHECK(try_broadcast(a, b, &out), ValueError, op, ": Cannot broadcast shapes ", shape_str(a), " and ",
             shape_str(b));
  return out;
}

AxisSplit split_axis(const Shape& shape, int axis) {
  AxisSplit s;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (d < axis)
      s.outer *= shape[d];
    else if (d == axis)
      s.axis = shape[d];
    else
      s.inner *= shape[d];
  }
  return s;
}

BroadcastPlan plan_broadcast(const char* op, const Shape& a, const Shape& b) {
  BroadcastPlan p;
  p.out_shape = broadcast_shape_for(op, a, b);
  const int rank = static_cast<int>(p.out_shape.size());
  // Contiguous strides of each operand, aligned to the output from the right; 0 where broadcast.
  std::vector<int64_t> sa(rank, 0), sb(rank, 0);
  int64_t ra = 1, rb = 1;
  for (int d = rank - 1; d >= 0; --d) {
    int ia = d - (rank - static_cast<int>(a.size())), ib = d - (rank - static_cast<int>(b.size()));
    if (ia >= 0 && a[ia] != 1) sa[d] = ra;
    if (ib >= 0 && b[ib] != 1) sb[d] = rb;
    if (ia >= 0) ra *= a[ia];
    if (ib >= 0) rb *= b[ib];
  }
  // Merge dim d into the previous merged dim when, for both operands, stepping the outer dim once is
  // the same as stepping the inner dim through its whole extent. Size-1 output dims vanish.
  for (int d = 0; d < rank; ++d) {
    int64_t n = p.out_shape[d];
    if (n == 1) continue;
    if (!p.shape.empty() && p.a_strides.back() == sa[d] * n && p.b_strides.back() == sb[d] * n) {
      p.shape.back() *= n;
      p.a_strides.back() = sa[d];
      p.b_strides.back() = sb[d];
    } else {
      p.shape.push_back(n);
      p.a_strides.push_back(sa[d]);
      p.b_strides.push_back(sb[d]);
    }
  }
  return p;
}

}  // namespace detail
}  // namespace kerascpp::ops
