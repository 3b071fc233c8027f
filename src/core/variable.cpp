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

std::vector<Tensor> batch_get_value(const std::vector<VariablePtr>& vars) {
  std::vector<Tensor> out;
  out.reserve(vars.size());
  for (const auto& v : vars) out.push_back(v->numpy());
  return out;
}

}  // namespace kerascpp
