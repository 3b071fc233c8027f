// Tensor: a dense, contiguous, row-major array with shared storage, 64-byte aligned (or, wrapped, a
// view of bytes another object owns, aligned to the element size: weights mapped from a file).
//
// Copying a Tensor shares its storage (cheap, thread-safe reference counting); view(), reshape()
// and slice() share it too; copy() makes new storage. A view keeps its storage alive.
//
//   Tensor x = Tensor::zeros({2, 3});
//   x.data<float>()[0] = 1.f;
//   Tensor y = x.reshape({3, 2});     // same bytes
//   Tensor rows = x.slice(1, 1);      // row 1 only, same bytes
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "kerascpp/dtype.h"
#include "kerascpp/error.h"

namespace kerascpp {

using Shape = std::vector<int64_t>;  // -1 stands for an unknown dimension (Keras None) in shapes
int64_t shape_size(const Shape& s);  // product of dims; 1 for a scalar
std::string shape_str(const Shape& s);  // Keras style: "(None, 10)"

// Owns one aligned allocation, or (wrap) views bytes that another object owns. Never resized.
class Storage {
 public:
  static constexpr size_t kAlignment = 64;
  // Allocations of kMapBytes or more are their own anonymous mapping: page-aligned, returned to the
  // system when freed, and zero already (the kernel hands out zeroed pages), so zeroing a big
  // tensor costs no pass over its memory. Loading a 100 MB model spent half its time in that pass.
  // Inside a training loop (fit, evaluate, train_on_batch), from 64 KiB they are mappings too, reused
  // step after step (src/core/mapping_cache.h).
  static constexpr size_t kMapBytes = size_t{1} << 20;
  static std::shared_ptr<Storage> allocate(size_t nbytes, bool zeroed = false);
  // nbytes at data, which `owner` keeps valid and writable (a private file mapping: weights loaded
  // with LoadOptions::mmap_weights). Not aligned beyond what the owner gives.
  static std::shared_ptr<Storage> wrap(void* data, size_t nbytes, std::shared_ptr<const void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  bool owns_bytes() const { return owner_ == nullptr; }  // false for wrap()

 private:
  Storage(void* data, size_t nbytes, bool mapped) : data_(data), nbytes_(nbytes), mapped_(mapped) {}
  void* data_;
  size_t nbytes_;
  bool mapped_;
  std::shared_ptr<const void> owner_;  // set by wrap(): data_ is the owner's
};

class Tensor {
 public:
  Tensor() = default;
  // Uninitialised storage of the given shape and dtype.
  static Tensor empty(Shape shape, DType dtype = DType::float32);
  static Tensor zeros(Shape shape, DType dtype = DType::float32);
  static Tensor from_vector(Shape shape, const std::vector<float>& values);  // float32
  // A tensor over existing storage (Storage::wrap); its bytes must hold the shape and be aligned to
  // the dtype's size (ValueError otherwise).
  static Tensor from_storage(std::shared_ptr<Storage> storage, Shape shape, DType dtype);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_.at(i < 0 ? i + rank() : i); }
  int64_t size() const { return shape_size(shape_); }
  size_t nbytes() const { return static_cast<size_t>(size()) * dtype_size(dtype_); }
  DType dtype() const { return dtype_; }

  void* raw_data() const { return static_cast<char*>(storage_->data()) + offset_; }
  template <typename T>
  T* data() const {
    return static_cast<T*>(raw_data());
  }

  Tensor reshape(Shape shape) const;           // a view; one dim may be -1; throws ValueError
  Tensor slice(int64_t start, int64_t count) const;  // a view of rows [start, start+count) of axis 0
  Tensor copy() const;                         // new storage, same contents
  Tensor astype(DType dtype) const;            // converted copy (float16/bfloat16/float64/int -> float32...)
  void copy_from(const Tensor& other);         // same shape and dtype required; throws ValueError
  bool shares_storage(const Tensor& other) const { return storage_ == other.storage_; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

 private:
  Shape shape_;
  DType dtype_ = DType::float32;
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;  // bytes
};

std::ostream& operator<<(std::ostream& os, DType t);

}  // namespace kerascpp
