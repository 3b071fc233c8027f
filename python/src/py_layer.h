// PythonLayer: a kerascpp layer whose computation is Python code the caller supplied through
// custom_objects: a custom layer class written the Keras way, or the function of a Lambda layer.
// Every entry into Python takes the GIL, so a model holding one predicts correctly (serialised on
// the GIL) from many threads. Code stored in a model file is never run.
#pragma once

#include <optional>

#include "common.h"

namespace kcpy {

// A strong reference to a Python object that can be dropped from any thread.
class PyRef {
 public:
  PyRef() = default;
  explicit PyRef(nb::handle h) : p_(h.ptr()) { Py_XINCREF(p_); }
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  PyRef(PyRef&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  PyRef& operator=(PyRef&& o) noexcept {
    std::swap(p_, o.p_);  // o drops what this held
    return *this;
  }
  ~PyRef();
  nb::handle get() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  PyObject* p_ = nullptr;
};

class PythonLayer : public Layer {
 public:
  // A custom layer: `instance` is the Python layer object made from the config.
  static std::shared_ptr<PythonLayer> from_instance(std::string class_name, nb::handle instance, const Json& config);
  // A Lambda layer running `fn(x, **arguments)`.
  static std::shared_ptr<PythonLayer> from_function(nb::handle fn, nb::handle arguments, std::optional<Shape> output_shape,
                                                    const Json& config);

  explicit PythonLayer(const Json& config) : Layer(config) {}
  std::string class_name() const override { return class_name_; }
  // Its add_weight() gave each variable the initializer the Python layer asked for: kept.
  void initialize(std::mt19937_64&) override {}
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& input_shapes) const override;
  std::vector<Tensor> call(const std::vector<Tensor>& inputs, const CallContext& ctx) const override;
  nb::handle instance() const { return instance_.get(); }
  // Used by kerascpp.layers.Layer.add_weight while build() runs.
  VariablePtr add_python_weight(const std::string& name, const Shape& shape, bool trainable) {
    return add_weight(name, shape, trainable);
  }

 protected:
  void do_build(const std::vector<Shape>& input_shapes) override;

 private:
  nb::object run(nb::handle x) const;  // GIL held
  std::string class_name_;
  PyRef instance_;   // the custom layer object (none for a Lambda)
  PyRef fn_;         // what call() runs: instance.call, or the Lambda's function
  PyRef arguments_;  // a Lambda's keyword arguments (a dict), or none
  std::optional<Shape> output_shape_;  // a Lambda's declared output shape without the batch axis
};

}  // namespace kcpy
