// take: rows of a table picked by integer indices (Embedding's lookup), and its gradient.
#include <algorithm>
#include <cstring>

#include "ops/checks.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

// The indices as int64, checked against [0, rows).
std::vector<int64_t> row_indices(const Tensor& indices, int64_t rows) {
  std::vector<int64_t> out(indices.size());
  const Tensor& idx = indices;  // tensors are contiguous views
  for (int64_t i = 0; i < indices.size(); ++i) {
    switch (idx.dtype()) {
      case DType::float32:
        out[i] = static_cast<int64_t>(idx.data<float>()[i]);  // Keras casts to int32: truncation
        break;
      case DType::int32:
        out[i] = idx.data<int32_t>()[i];
        break;
      case DType::int64:
        out[i] = idx.data<int64_t>()[i];
        break;
      default:
        KCPP_THROW(ValueError, "take: indices must be float32, int32 or int64. Received: dtype=",
                   dtype_name(idx.dtype()));
    }
    KCPP_CHECK(out[i] >= 0 && out[i] < rows, ValueError, "take: indices[", i, "] = ", out[i],
               " is not in [0, ", rows, ")");
  }
  return out;
}

}  // namespace

Tensor take(const Tensor& table, const Tensor& indices) {
  detail::check_float32("take", table, "table");
  KCPP_CHECK(table.rank() >= 1, ValueError, "take: the table must have rank >= 1. Received: shape=",
             shape_str(table.shape()));
  const int64_t rows = table.dim(0), row = table.size() / std::max<int64_t>(rows, 1);
  const std::vector<int64_t> at = row_indices(indices, rows);
  Shape out_shape = indices.shape();
  out_shape.insert(out_shape.end(), table.shape().begin() + 1, table.shape().end());
  Tensor y = Tensor::empty(out_shape);
  for (size_t i = 0; i < at.size(); ++i)
    std::memcpy(y.data<float>() + i * row, table.data<float>() + at[i] * row, sizeof(float) * row);
  if (Recorder* r = tape_for({&table}))
    r->record("take", {table, indices}, y, [at, row, shape = table.shape()](const Tensor& dy) {
      Tensor d = Tensor::zeros(shape);
      const Tensor& g = dy;
      for (size_t i = 0; i < at.size(); ++i)
        for (int64_t j = 0; j < row; ++j) d.data<float>()[at[i] * row + j] += g.data<float>()[i * row + j];
      return Grads{d, Tensor()};
    });
  return y;
}

}  // namespace kerascpp::ops
