// Keras's rank alignment and reductions for losses, composed from ops (see loss_utils.h).
#include "training/losses/loss_utils.h"

namespace kerascpp::losses::detail {

Tensor scalar(float v) { return Tensor::from_vector({}, {v}); }

Tensor as_float(const Tensor& t, const std::string& who, const char* what) {
  KCPP_CHECK(t.defined(), ValueError, who, ": ", what, " is undefined.");
  return t.dtype() == DType::float32 ? t : t.astype(DType::float32);
}

namespace {

Shape without_last(const Shape& s) { return Shape(s.begin(), s.end() - 1); }
Shape with_last_1(Shape s) {
  s.push_back(1);
  return s;
}

}  // namespace

// keras/src/losses/loss.py squeeze_or_expand_to_same_rank(y_true, y_pred). y_true is never
// differentiated, so it is reshaped freely; y_pred is squeezed by a sum over its axis of size 1
// (an op the tape records) and never expanded (see Aligned).
Aligned align(const std::string& loss, const Tensor& y_true, const Tensor& y_pred, bool keep_true_dtype) {
  Aligned a;
  a.y_pred = as_float(y_pred, loss, "y_pred");
  KCPP_CHECK(y_true.defined(), ValueError, loss, ": y_true is undefined.");
  a.y_true = keep_true_dtype ? y_true : as_float(y_true, loss, "y_true");
  const int rt = a.y_true.rank(), rp = a.y_pred.rank();
  if (rt == rp + 1 && a.y_true.dim(-1) == 1) {
    if (rp == 1) a.implicit_last = true;  // Keras: y_pred = expand_dims(y_pred, -1)
    a.y_true = a.y_true.reshape(without_last(a.y_true.shape()));
  } else if (rp == rt + 1 && a.y_pred.dim(-1) == 1) {
    if (rt == 1)
      a.y_true = a.y_true.reshape(with_last_1(a.y_true.shape()));
    else
      a.y_pred = ops::sum(a.y_pred, -1);
  }
  return a;
}

void check_broadcast(const std::string& loss, const Tensor& y_true, const Tensor& y_pred) {
  const Shape& a = y_true.shape();
  const Shape& b = y_pred.shape();
  bool ok = true;
  for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    const int64_t x = a[a.size() - i], y = b[b.size() - i];
    ok = ok && (x == y || x == 1 || y == 1);
  }
  KCPP_CHECK(ok, ValueError, loss, ": y_true and y_pred have incompatible shapes. Received: y_true.shape=",
             shape_str(a), ", y_pred.shape=", shape_str(b));
}

void check_same_shape(const std::string& loss, const Tensor& y_true, const Tensor& y_pred) {
  KCPP_CHECK(y_true.shape() == y_pred.shape(), ValueError, loss,
             ": Arguments `target` and `output` must have the same shape. Received: y_true.shape=",
             shape_str(y_true.shape()), ", y_pred.shape=", shape_str(y_pred.shape()));
}

Tensor mean_last(const Tensor& x, const Aligned& a, int axis) {
  return a.implicit_last ? x : ops::reduce_mean(x, {axis});
}
Tensor sum_last(const Tensor& x, const Aligned& a, int axis) { return a.implicit_last ? x : ops::sum(x, axis); }
Tensor max_last(const Tensor& x, const Aligned& a) { return a.implicit_last ? x : ops::reduce_max(x, {-1}); }

Tensor sum_all(Tensor x) {
  while (x.rank() > 0) x = ops::sum(x, -1);
  return x;
}

Tensor reduce_weighted_values(const std::string& loss, const Tensor& values_in, const Tensor& sample_weight,
                              Reduction reduction) {
  Tensor values = values_in;
  Tensor sw;
  bool expand_result = false;  // Keras would have expanded values to (batch, 1)
  if (sample_weight.defined()) {
    sw = as_float(sample_weight, loss, "sample_weight");
    // squeeze_or_expand_to_same_rank(values, sample_weight)
    const int rv = values.rank(), rs = sw.rank();
    if (rv == rs + 1 && values.dim(-1) == 1) {
      if (rs == 1)
        sw = sw.reshape(with_last_1(sw.shape()));
      else
        values = ops::sum(values, -1);
    } else if (rs == rv + 1 && sw.dim(-1) == 1) {
      expand_result = rv == 1;
      sw = sw.reshape(without_last(sw.shape()));
    }
    try {
      ops::broadcast_shape(values.shape(), sw.shape());
    } catch (const ValueError&) {
      KCPP_THROW(ValueError, loss, ": sample_weight does not broadcast to the per-sample losses. Received: "
                 "sample_weight.shape=", shape_str(sample_weight.shape()), ", losses.shape=", shape_str(values_in.shape()));
    }
    values = mul(values, sw);
  }
  if (reduction == Reduction::none) {
    // Tensor::reshape is a view, not an op: a tape would not follow it. Only this rare case
    // (reduction none, losses (batch,), sample_weight (batch, 1)) takes it, to give Keras's shape.
    return expand_result ? values.reshape(with_last_1(values.shape())) : values;
  }
  if (values.rank() == 0 || (values.rank() == 1 && values.dim(0) == 0)) return values;
  Tensor total = sum_all(values);
  if (reduction == Reduction::sum) return total;
  double divisor = static_cast<double>(values.size());
  if (reduction == Reduction::mean_with_sample_weight && sw.defined()) {
    const Tensor s = sum_all(sw);
    divisor = s.data<float>()[0];
  }
  // ops.divide_no_nan
  if (divisor == 0) return mul(total, scalar(0.f));
  return div(total, scalar(static_cast<float>(divisor)));
}

}  // namespace kerascpp::losses::detail
