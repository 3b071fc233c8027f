// Element types of tensors, with their Keras names and sizes.
//
//   DType t = dtype_from_name("float32");   // throws ValueError for an unknown name
//   size_t n = dtype_size(t);              // 4
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kerascpp {

// float16 and bfloat16 exist so that files holding them can be read; compute is float32.
enum class DType : uint8_t { float32, float64, float16, bfloat16, int32, int64, uint8, int8, bool_ };

size_t dtype_size(DType t);
std::string_view dtype_name(DType t);                 // Keras name: "float32", "bool", ...
DType dtype_from_name(std::string_view name);         // throws ValueError
bool dtype_from_name(std::string_view name, DType* out);  // false for an unknown name

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bfloat16_to_float(uint16_t b);
uint16_t float_to_bfloat16(float f);  // round to nearest even

}  // namespace kerascpp
