// Argument checks and shape helpers shared by the op files (not part of the op list in ops.h).
//
//   check_float32("softmax", x, "x");             // ValueError unless x is a defined float32 tensor
//   AxisSplit s = split_axis(x.shape(), axis);    // x viewed as (outer, axis, inner)
#pragma once

#include <vector>

#include "kerascpp/tensor.h"

namespace kerascpp::ops::detail {

// ValueError "<op>: ..." unless t is defined.
void check_defined(const char* op, const Tensor& t, const char* name);
// ValueError "<op>: Only float32 is supported. Received: <name>.dtype=int32" unless t is float32.
void check_float32(const char* op, const Tensor& t, const char* name);
// normalize_axis, with the op named in the message.
int normalize_axis_for(const char* op, int axis, int rank);
// broadcast_shape, with the op named in the message.
Shape broadcast_shape_for(const char* op, const Shape& a, const Shape& b);

// A tensor seen as (outer, axis, inner) around one axis, for the kernels that work along one axis.
struct AxisSplit {
  int64_t outer = 1, axis = 1, inner = 1;
};
AxisSplit split_axis(const Shape& shape, int axis);  // axis already normalised

// What a broadcasting binary kernel needs: the output shape and, per operand, a stride per output
// dim (0 where broadcast), with neighbouring dims merged where both operands allow it:
// (2, 3, 4) + (2, 3, 4) walks one dim of 24; (8, 5) + (5,) walks (8, 5) with a=(5, 1), b=(0, 1);
// (4, 1, 3) + (2, 3) walks (4, 2, 3) with a=(3, 0, 1), b=(0, 3, 1).
struct BroadcastPlan {
  Shape out_shape;                 // the broadcast result, as a Tensor shape
  std::vector<int64_t> shape;      // merged dims the kernel walks
  std::vector<int64_t> a_strides;  // per merged dim, elements
  std::vector<int64_t> b_strides;
};
BroadcastPlan plan_broadcast(const char* op, const Shape& a, const Shape& b);

}  // namespace kerascpp::ops::detail
