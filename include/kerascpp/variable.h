// Variable: a named, shaped tensor owned by a layer (a Keras weight such as "dense/kernel").
//
// Reading costs O(1) for a view or O(bytes) for a copy and leaves nothing behind: there is no
// session or graph that grows with calls.
//
//   VariablePtr k = model.get_layer("dense").weights()[0];
//   Tensor view = k->value();   // shares the variable's storage; keeps it alive
//   Tensor copy = k->numpy();   // an independent copy
//   k->assign(Tensor::zeros(k->shape()));
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "kerascpp/tensor.h"

namespace kerascpp {

class Variable {
 public:
  Variable(std::string name, std::string path, Tensor value, bool trainable)
      : name_(std::move(name)), path_(std::move(path)), value_(std::move(value)), trainable_(trainable) {}

  const std::string& name() const { return name_; }  // "kernel"
  const std::string& path() const { return path_; }  // "dense/kernel"
  const Shape& shape() const { return value_.shape(); }
  DType dtype() const { return value_.dtype(); }
  bool trainable() const { return trainable_; }
  void set_trainable(bool t) { trainable_ = t; }

  Tensor value() const { return value_; }          // a view of the storage
  // The storage's first element, for kernels that read or update it in place without a Tensor (no
  // copy of the shape). assign() writes into the same storage, so the address holds for the
  // variable's life; share() changes it (see there).
  template <typename T>
  T* data() const {
    return value_.data<T>();
  }
  Tensor numpy() const { return value_.copy(); }   // a copy
  // Copies `v` into the variable's storage; ValueError naming the variable when shapes differ.
  // float16/bfloat16/float64 values are converted to the variable's dtype.
  void assign(const Tensor& v);
  // Bumped by every assign(): kernels that keep a re-laid-out copy of a weight (oneDNN's blocked
  // convolution weights, an inference plan's Dense or convolution with the BatchNormalization after it
  // folded in) rebuild it when this changes. Writing through a value() view does not bump it; assign() is
  // the way to change a variable (or call mark_updated() after writing).
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  // For writers that update the storage in place through value() (optimizers): call after writing,
  // so that kernels holding a re-laid-out copy rebuild it.
  void mark_updated() { version_.fetch_add(1, std::memory_order_acq_rel); }
  // Makes `value` itself (same shape and dtype; ValueError otherwise) the variable's storage, not a
  // copy of it: how LoadOptions::mmap_weights makes weights views of the mapped file. Only for a model
  // no one uses yet: views taken before keep the old storage, and kernels or inference plans that
  // kept its address must be rebuilt (Functional::rebuild_inference_plans).
  void share(Tensor value);

 private:
  std::string name_;
  std::string path_;
  Tensor value_;
  bool trainable_;
  std::atomic<uint64_t> version_{0};
};

using VariablePtr = std::shared_ptr<Variable>;

// Keras backend functions (keras.backend.get_value / batch_get_value / set_value).
inline Tensor get_value(const Variable& v) { return v.numpy(); }
std::vector<Tensor> batch_get_value(const std::vector<VariablePtr>& vars);
inline void set_value(Variable& v, const Tensor& value) { v.assign(value); }

}  // namespace kerascpp
