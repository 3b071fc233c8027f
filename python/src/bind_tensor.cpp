// numpy <-> Tensor. Tensor -> numpy shares the tensor's storage (a capsule holds a Tensor, and so a
// reference to the storage); numpy -> Tensor copies.
#include <cstring>

#include "common.h"

namespace kcpy {

namespace {
nb::dlpack::dtype dl_dtype(DType t) {
  switch (t) {
    case DType::float32: return nb::dtype<float>();
    case DType::float64: return nb::dtype<double>();
    case DType::float16: return nb::dlpack::dtype{(uint8_t)nb::dlpack::dtype_code::Float, 16, 1};
    case DType::int32: return nb::dtype<int32_t>();
    case DType::int64: return nb::dtype<int64_t>();
    case DType::uint8: return nb::dtype<uint8_t>();
    case DType::int8: return nb::dtype<int8_t>();
    case DType::bool_: return nb::dtype<bool>();
    default: KCPP_THROW(TypeError, "No numpy dtype for ", dtype_name(t));
  }
}
}  // namespace

nb::object to_numpy(const Tensor& tensor, bool readonly) {
  KCPP_CHECK(tensor.defined(), ValueError, "Cannot convert an undefined tensor to numpy");
  Tensor t = tensor.dtype() == DType::bfloat16 ? tensor.astype(DType::float32) : tensor;
  auto* keep = new Tensor(t);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  nb::ndarray<nb::numpy> arr(t.raw_data(), shape.size(), shape.data(), owner, nullptr, dl_dtype(t.dtype()));
  nb::object out = nb::cast(arr, nb::rv_policy::reference);
  if (readonly) out.attr("flags").attr("writeable") = false;
  return out;
}

Tensor from_numpy(const FloatArray& a) {
  Shape shape(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) shape[i] = static_cast<int64_t>(a.shape(i));
  Tensor t = Tensor::empty(shape, DType::float32);
  if (t.nbytes()) std::memcpy(t.raw_data(), a.data(), t.nbytes());
  return t;
}

Tensor from_object(nb::handle obj) {
  // A C-contiguous float32 array is read as it is (no conversion: the per-call cost of predict on a
  // small batch); anything else goes through numpy first.
  FloatArray direct;
  if (nb::try_cast(obj, direct, /*convert=*/false)) return from_numpy(direct);
  // asarray(order="C"), not ascontiguousarray, which makes a 0-d value (a learning rate) 1-d.
  nb::object arr = nb::module_::import_("numpy").attr("asarray")(obj, "float32", "C");
  return from_numpy(nb::cast<FloatArray>(arr));
}

std::vector<Tensor> tensors_from(nb::handle seq) {
  std::vector<Tensor> out;
  for (nb::handle v : seq) out.push_back(from_object(v));
  return out;
}

nb::object shape_to_py(const Shape& s) {
  nb::list l;
  for (int64_t d : s) l.append(d < 0 ? nb::none() : nb::cast(d));
  return nb::tuple(l);
}

Shape shape_from_py(nb::handle obj) {
  Shape s;
  for (nb::handle d : obj) s.push_back(d.is_none() ? -1 : nb::cast<int64_t>(d));
  return s;
}

void bind_tensor(nb::module_& m) {
  // For tests and tools: a round trip through a kerascpp tensor.
  m.def("_roundtrip", [](FloatArray a) { return to_numpy(from_numpy(a)); });
}

}  // namespace kcpy
