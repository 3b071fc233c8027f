// pad, slice and repeat: the data movement of ZeroPadding*, Cropping* and UpSampling* (nearest).
#include "kernels/pad_slice.h"

#include <cstring>
#include <string>

#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::ops {
namespace {

void check_rank(const char* op, const Tensor& x, size_t n, const char* what) {
  detail::check_defined(op, x, "x");
  KCPP_CHECK(n == static_cast<size_t>(x.rank()), ValueError, op, ": `", what,
             "` needs one entry per dim of x (", x.rank(), "). Received: ", n,
             " entries for x.shape=", shape_str(x.shape()));
  KCPP_CHECK(x.rank() <= kernels::kMaxRank, NotImplementedError, op, ": tensors of rank above ",
             kernels::kMaxRank, " are not supported. Received: rank=", x.rank());
}

std::string pads_str(const std::vector<std::pair<int64_t, int64_t>>& pads) {
  std::string s = "(";
  for (size_t i = 0; i < pads.size(); ++i)
    s += (i ? ", (" : "(") + std::to_string(pads[i].first) + ", " + std::to_string(pads[i].second) + ")";
  return s + ")";
}

}  // namespace

Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& pads, float value) {
  check_rank("pad", x, pads.size(), "pads");
  std::vector<int64_t> before, after;
  Shape out = x.shape();
  for (size_t d = 0; d < pads.size(); ++d) {
    KCPP_CHECK(pads[d].first >= 0 && pads[d].second >= 0, ValueError,
               "pad: paddings must be non-negative. Received: pads=", pads_str(pads));
    before.push_back(pads[d].first);
    after.push_back(pads[d].second);
    out[d] += pads[d].first + pads[d].second;
  }
  KCPP_CHECK(value == 0.f || x.dtype() == DType::float32, ValueError,
             "pad: a non-zero constant needs a float32 tensor. Received: value=", value, " for dtype ",
             dtype_name(x.dtype()));
  // The fill element: `value` as float32, or zero bytes of any dtype.
  alignas(8) unsigned char fill[16] = {};
  if (x.dtype() == DType::float32) std::memcpy(fill, &value, sizeof(float));
  Tensor y = Tensor::empty(out, x.dtype());
  kernels::pad(x.raw_data(), y.raw_data(), dtype_size(x.dtype()), x.shape().data(), before.data(),
               after.data(), x.rank(), fill);
  if (Recorder* r = x.dtype() == DType::float32 ? tape_for({&x}) : nullptr)
    r->record("pad", {x}, y, [before, shape = x.shape()](const Tensor& dy) { return Grads{slice(dy, before, shape)}; });
  return y;
}

Tensor slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size) {
  check_rank("slice", x, begin.size(), "begin");
  check_rank("slice", x, size.size(), "size");
  for (int d = 0; d < x.rank(); ++d)
    KCPP_CHECK(begin[d] >= 0 && size[d] >= 0 && begin[d] + size[d] <= x.dim(d), ValueError,
               "slice: the window must lie inside x. Received: begin=", begin, ", size=", size,
               " for x.shape=", shape_str(x.shape()));
  Tensor y = Tensor::empty(size, x.dtype());
  kernels::slice(x.raw_data(), y.raw_data(), dtype_size(x.dtype()), x.shape().data(), begin.data(),
                 size.data(), x.rank());
  if (Recorder* r = x.dtype() == DType::float32 ? tape_for({&x}) : nullptr)
    r->record("slice", {x}, y, [begin, size, shape = x.shape()](const Tensor& dy) {
      std::vector<std::pair<int64_t, int64_t>> pads;
      for (size_t d = 0; d < shape.size(); ++d) pads.emplace_back(begin[d], shape[d] - begin[d] - size[d]);
      return Grads{pad(dy, pads)};
    });
  return y;
}

Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  check_rank("repeat", x, repeats.size(), "repeats");
  Shape out = x.shape();
  for (int d = 0; d < x.rank(); ++d) {
    KCPP_CHECK(repeats[d] >= 0, ValueError,
               "repeat: repeats must be non-negative. Received: repeats=", repeats);
    out[d] *= repeats[d];
  }
  Tensor y = Tensor::empty(out, x.dtype());
  kernels::repeat(x.raw_data(), y.raw_data(), dtype_size(x.dtype()), x.shape().data(), repeats.data(),
                  x.rank());
  if (Recorder* r = x.dtype() == DType::float32 ? tape_for({&x}) : nullptr)
    r->record("repeat", {x}, y, [repeats, shape = x.shape()](const Tensor& dy) {
      // dy as (d0, r0, d1, r1, ...): the repeats of each element are summed.
      Shape split;
      std::vector<int> copies;
      for (size_t d = 0; d < shape.size(); ++d) {
        split.push_back(shape[d]);
        copies.push_back(static_cast<int>(split.size()));
        split.push_back(repeats[d]);
      }
      return Grads{detail::sum_axes(dy.reshape(split), copies).reshape(shape)};
    });
  return y;
}

}  // namespace kerascpp::ops
