#include "kerascpp/variable.h"

namespace kerascpp {

void Variable::assign(const Tensor& v) {
  KCPP_CHECK(v.defined() && v.shape() == value_.shape(), ValueError, "Cannot assign a value of shape ",
             shape_str(v.defined() ? v.shape() : Shape{}), " to variable '", path_, "' of shape ",
             shape_str(value_.shape()));
  if (v.dtype() == value_.dtype())
    value_.copy_from(v);
  else
    value_.copy_from(v.astype(value_.dtype()));
  version_.fetch_add(1, std::memory_order_acq_rel);
}

void Variable::share(Tensor value) {
  KCPP_CHECK(value.defined() && value.shape() == value_.shape() && value.dtype() == value_.dtype(), ValueError,
             "Cannot share a value of shape ", shape_str(value.defined() ? value.shape() : Shape{}), " (",
             dtype_name(value.defined() ? value.dtype() : value_.dtype()), ") as variable '", path_, "' of shape ",
             shape_str(value_.shape()), " (", dtype_name(value_.dtype()), ")");
  value_ = std::move(value);
  version_.fetch_add(1, std::memory_order_acq_rel);
}

std::vector<Tensor> batch_get_value(const std::vector<VariablePtr>& vars) {
  std::vector<Tensor> out;
  out.reserve(vars.size());
  for (const auto& v : vars) out.push_back(v->numpy());
  return out;
}

}  // namespace kerascpp
