// Shared declarations of the kerascpp Python bindings: one bind_*() per area, and the conversions
// between numpy arrays and kerascpp tensors. The bindings hold no logic of their own.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "kerascpp/model.h"

namespace kcpy {

namespace nb = nanobind;
using namespace kerascpp;

using FloatArray = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;

// A numpy array over the tensor's own storage (no copy); the array keeps the storage alive.
// bfloat16 tensors are converted to float32 (numpy has no bfloat16).
nb::object to_numpy(const Tensor& t, bool readonly = false);
// A float32 tensor holding a copy of `a`.
Tensor from_numpy(const FloatArray& a);
// Any array-like: converted to a C-contiguous float32 numpy array first (copy), then to a tensor.
Tensor from_object(nb::handle obj);
// A list of array-likes as tensors (each converted as from_object).
std::vector<Tensor> tensors_from(nb::handle seq);
nb::object shape_to_py(const Shape& s);  // -1 -> None
Shape shape_from_py(nb::handle obj);     // None -> -1

void bind_errors(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_variable(nb::module_& m);
void bind_layer(nb::module_& m);
void bind_model(nb::module_& m);
void bind_build(nb::module_& m);
void bind_custom(nb::module_& m);
void bind_training(nb::module_& m);
void bind_callbacks(nb::module_& m);
void bind_distribute(nb::module_& m);

// Keras's logs dict from kerascpp's Logs (GIL held), and back: the numbers in `d` are set into
// `logs` (keys a callback added or changed; other values are skipped).
nb::dict logs_to_py(const Logs& logs);
// An array log or metric result as Keras gives one: a float32 numpy array.
nb::object float32_array(const std::vector<double>& values);
void logs_from_py(nb::handle d, Logs& logs);
// Re-raises the Python exception in flight as the matching kerascpp error (GIL held), so that it
// crosses the C++ engine and comes back to Python as the same exception type, with its message.
[[noreturn]] void rethrow_python(const nb::python_error& e, const std::string& where);

}  // namespace kcpy

namespace kcpy {
// Keras's custom_objects (a dict of name -> Python class or function) as kerascpp layer factories: a
// class by its names, a function as the Lambda layers named after it or naming it. With safe_mode
// false, also the Lambda layers whose function is stored in the file (run as Keras runs it, by
// kerascpp/_lambda.py). The factories hold Python references: destroy the result with the GIL held.
CustomObjects make_custom_objects(nb::handle custom_objects, bool safe_mode = true);
}  // namespace kcpy
