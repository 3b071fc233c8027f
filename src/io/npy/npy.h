// NumPy .npy files (format versions 1-3), for the CLI and tests: C-order arrays of float16/32/64,
// int8/32/64, uint8 and bool, little-endian.
//
//   Tensor x = io::read_npy("input_0.npy");
//   io::write_npy("output_0.npy", y);
#pragma once

#include <string>

#include "kerascpp/tensor.h"

namespace kerascpp::io {

Tensor read_npy(const std::string& path);  // IOError / NotImplementedError naming the file
// The same from the bytes of a file; the shape is checked against the bytes present before the
// tensor is allocated.
Tensor read_npy_bytes(const void* data, size_t size, const std::string& name = "<memory>");
void write_npy(const std::string& path, const Tensor& t);

}  // namespace kerascpp::io
