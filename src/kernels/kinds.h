// The elementwise operations the kernels know, shared by the reference and the fast kernels.
//
// Kernels sit below ops; ops::BinaryOp and ops::UnaryOp are these enums (one list each: binary_list.inc,
// unary_list.inc).
// Formulas are stated in ref/activation.cpp, which is the definition the fast kernels are tested against.
#pragma once

#include <string_view>

namespace kerascpp::kernels {

#define KCPP_BINARY(name) name,
enum class Binary {
#include "kernels/binary_list.inc"
};
#undef KCPP_BINARY

#define KCPP_BINARY(name) Binary::name,
inline constexpr Binary kAllBinary[] = {
#include "kernels/binary_list.inc"
};
#undef KCPP_BINARY

constexpr std::string_view binary_name(Binary op) {
#define KCPP_BINARY(name) \
  if (op == Binary::name) return #name;
#include "kernels/binary_list.inc"
#undef KCPP_BINARY
  return "unknown";
}

// alpha: slope of leaky_relu, scale of elu; unused by the others. The ops are listed in unary_list.inc.
#define KCPP_UNARY(name) name,
enum class Unary {
#include "kernels/unary_list.inc"
};
#undef KCPP_UNARY

// Every op, in the list's order.
#define KCPP_UNARY(name) Unary::name,
inline constexpr Unary kAllUnary[] = {
#include "kernels/unary_list.inc"
};
#undef KCPP_UNARY

// The op's name in the list ("gelu_approximate"), for messages and the tape.
constexpr std::string_view unary_name(Unary op) {
#define KCPP_UNARY(name) \
  if (op == Unary::name) return #name;
#include "kernels/unary_list.inc"
#undef KCPP_UNARY
  return "unknown";
}

// Upper bound on the rank of tensors that transpose accepts: it keeps per-dimension state on the
// stack. Ops check it; Keras tensors rarely pass 6.
inline constexpr int kMaxRank = 16;

// Keras 3 selu constants (keras/src/backend/tensorflow/nn.py uses tf.nn.selu, which uses these).
inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;

}  // namespace kerascpp::kernels
