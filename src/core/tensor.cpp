#include "kerascpp/tensor.h"

#include "core/mapping_cache.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace kerascpp {

int64_t shape_size(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)  // a count beyond int64 (dims from a hostile file) is an error, never a wrapped size
    KCPP_CHECK(!__builtin_mul_overflow(n, d, &n), ValueError, "A tensor of shape ", shape_str(s),
               " has more elements than kerascpp can count");
  return n;
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) os << ", ";
    if (s[i] < 0)
      os << "None";
    else
      os << s[i];
  }
  os << (s.size() == 1 ? ",)" : ")");
  return os.str();
}

namespace {
// A mapping's length: whole pages (what munmap releases, and the key of a MappingCache).
size_t mapped_length(size_t nbytes) {
  constexpr size_t kPage = 4096;
  return (nbytes + kPage - 1) / kPage * kPage;
}
}  // namespace

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, bool zeroed) {
  // Inside a training loop's scope a medium tensor is a mapping too, kept for the next step's: from
  // the heap, the MLP's 400 KB batches grew and trimmed its top every step (1.2 brk calls a step, and
  // 8 % of its epoch faulting and clearing the pages again).
  if (nbytes >= kMapBytes || nbytes >= MappingCache::scoped_min_bytes()) {
    if (void* kept = MappingCache::take(mapped_length(nbytes))) {  // a training loop's: not zero
      if (zeroed) std::memset(kept, 0, nbytes);
      MappingCache::allocated(mapped_length(nbytes));
      return std::shared_ptr<Storage>(new Storage(kept, nbytes, true));
    }
    void* p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    // Transparent huge pages where the system allows them: fewer faults (ResNet50: 27k -> 6k per
    // load here). Aligning the mapping to 2 MiB by hand measured no better.
    if (nbytes >= kMapBytes) madvise(p, nbytes, MADV_HUGEPAGE);
    MappingCache::allocated(mapped_length(nbytes));
    return std::shared_ptr<Storage>(new Storage(p, nbytes, true));
  }
  // aligned_alloc wants a multiple of the alignment; never ask for 0 bytes.
  size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (!p) throw std::bad_alloc();
  if (zeroed) std::memset(p, 0, nbytes);
  return std::shared_ptr<Storage>(new Storage(p, nbytes, false));
}

std::shared_ptr<Storage> Storage::wrap(void* data, size_t nbytes, std::shared_ptr<const void> owner) {
  KCPP_CHECK(owner != nullptr && (data != nullptr || nbytes == 0), ValueError,
             "Storage::wrap needs the bytes and their owner");
  auto s = std::shared_ptr<Storage>(new Storage(data, nbytes, false));
  s->owner_ = std::move(owner);
  return s;
}

Storage::~Storage() {
  if (owner_) return;  // the owner's bytes: released with owner_
  if (mapped_) {
    if (!MappingCache::give(data_, mapped_length(nbytes_))) munmap(data_, nbytes_);
  } else {
    std::free(data_);
  }
}

namespace {
// The bytes of a tensor of this shape and dtype; ValueError for a negative dim or a count beyond int64
// (dims from a hostile file), never a wrapped size.
size_t checked_nbytes(const Shape& shape, DType dtype) {
  for (int64_t d : shape)
    KCPP_CHECK(d >= 0, ValueError, "Tensor dimensions must be non-negative. Received: shape=", shape);
  int64_t bytes = 0;
  KCPP_CHECK(!__builtin_mul_overflow(shape_size(shape), static_cast<int64_t>(dtype_size(dtype)), &bytes), ValueError,
             "A tensor of shape ", shape_str(shape), " has more bytes than kerascpp can count");
  return static_cast<size_t>(bytes);
}
}  // namespace

Tensor Tensor::empty(Shape shape, DType dtype) {
  const size_t bytes = checked_nbytes(shape, dtype);
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.storage_ = Storage::allocate(bytes);
  return t;
}

Tensor Tensor::zeros(Shape shape, DType dtype) {
  const size_t bytes = checked_nbytes(shape, dtype);
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.storage_ = Storage::allocate(bytes, /*zeroed=*/true);
  return t;
}

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, Shape shape, DType dtype) {
  const size_t bytes = checked_nbytes(shape, dtype);
  KCPP_CHECK(storage && storage->nbytes() >= bytes, ValueError, "A storage of ",
             storage ? storage->nbytes() : 0, " bytes cannot hold a tensor of shape ", shape_str(shape), " (",
             dtype_name(dtype), ")");
  KCPP_CHECK(reinterpret_cast<uintptr_t>(storage->data()) % dtype_size(dtype) == 0, ValueError,
             "A tensor of ", dtype_name(dtype), " cannot start at an address that is not a multiple of ",
             dtype_size(dtype));
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.storage_ = std::move(storage);
  return t;
}

Tensor Tensor::from_vector(Shape shape, const std::vector<float>& values) {
  Tensor t = empty(std::move(shape));
  KCPP_CHECK(static_cast<int64_t>(values.size()) == t.size(), ValueError, "Expected ", t.size(),
             " values for shape ", shape_str(t.shape()), ". Received: ", values.size(), " values");
  if (!values.empty()) std::memcpy(t.raw_data(), values.data(), t.nbytes());  // an empty vector's data() may be null
  return t;
}

Tensor Tensor::reshape(Shape shape) const {
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      KCPP_CHECK(unknown < 0, ValueError, "Can only specify one unknown dimension. Received: shape=",
                 shape);
      unknown = static_cast<int>(i);
    } else {
      KCPP_CHECK(shape[i] >= 0, ValueError, "Invalid dimension in reshape. Received: shape=", shape);
      known *= shape[i];
    }
  }
  if (unknown >= 0) {
    KCPP_CHECK(known > 0 && size() % known == 0, ValueError, "Cannot reshape a tensor of shape ",
               shape_, " (", size(), " elements) into shape ", shape);
    shape[unknown] = size() / known;
  }
  KCPP_CHECK(shape_size(shape) == size(), ValueError, "Cannot reshape a tensor of shape ", shape_, " (",
             size(), " elements) into shape ", shape);
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::slice(int64_t start, int64_t count) const {
  KCPP_CHECK(rank() >= 1 && start >= 0 && count >= 0 && start + count <= shape_[0], ValueError,
             "Slice [", start, ", ", start + count, ") is out of range for shape ", shape_);
  Tensor t = *this;
  int64_t row = shape_size(Shape(shape_.begin() + 1, shape_.end()));
  t.offset_ += static_cast<size_t>(start * row) * dtype_size(dtype_);
  t.shape_[0] = count;
  return t;
}

Tensor Tensor::copy() const {
  Tensor t = empty(shape_, dtype_);
  if (nbytes()) std::memcpy(t.raw_data(), raw_data(), nbytes());
  return t;
}

void Tensor::copy_from(const Tensor& other) {
  KCPP_CHECK(other.shape_ == shape_ && other.dtype_ == dtype_, ValueError, "Cannot copy a ",
             other.dtype_, " tensor of shape ", other.shape_, " into a ", dtype_, " tensor of shape ",
             shape_);
  if (nbytes()) std::memmove(raw_data(), other.raw_data(), nbytes());
}

namespace {
double load(const void* p, DType t, int64_t i) {
  switch (t) {
    case DType::float32: return static_cast<const float*>(p)[i];
    case DType::float64: return static_cast<const double*>(p)[i];
    case DType::float16: return half_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::bfloat16: return bfloat16_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::int32: return static_cast<const int32_t*>(p)[i];
    case DType::int64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::uint8: return static_cast<const uint8_t*>(p)[i];
    case DType::int8: return static_cast<const int8_t*>(p)[i];
    case DType::bool_: return static_cast<const uint8_t*>(p)[i] != 0;
  }
  return 0;
}
void store(void* p, DType t, int64_t i, double v) {
  switch (t) {
    case DType::float32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DType::float64: static_cast<double*>(p)[i] = v; break;
    case DType::float16: static_cast<uint16_t*>(p)[i] = float_to_half(static_cast<float>(v)); break;
    case DType::bfloat16: static_cast<uint16_t*>(p)[i] = float_to_bfloat16(static_cast<float>(v)); break;
    case DType::int32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
    case DType::int64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
    case DType::uint8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
    case DType::int8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
    case DType::bool_: static_cast<uint8_t*>(p)[i] = v != 0; break;
  }
}
}  // namespace

Tensor Tensor::astype(DType dtype) const {
  if (dtype == dtype_) return copy();
  Tensor t = empty(shape_, dtype);
  const int64_t n = size();
  if (dtype_ == DType::float16 && dtype == DType::float32) {
    const auto* s = data<uint16_t>();
    float* d = t.data<float>();
    for (int64_t i = 0; i < n; ++i) d[i] = half_to_float(s[i]);
    return t;
  }
  for (int64_t i = 0; i < n; ++i) store(t.raw_data(), dtype, i, load(raw_data(), dtype_, i));
  return t;
}

std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

}  // namespace kerascpp
