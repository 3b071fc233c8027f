// Included by the files of kernels/isa/ only: they are compiled once per instruction set, with
// -march=<level> and KCPP_ISA=<baseline|avx2|avx512> (CMakeLists.txt), and define the kernels of
// KCPP_ISA_KERNELS in namespace kerascpp::kernels::KCPP_ISA. Everything else in these files sits in
// that namespace or an anonymous one: an inline function with external linkage compiled here could be
// picked by the linker for code that runs on any CPU (the `isa_symbols` test checks the objects).
#pragma once

#include "kernels/isa.h"

#ifndef KCPP_ISA
#error "kernels/isa/*.cpp are compiled per instruction set: KCPP_ISA must name the set"
#endif

namespace kerascpp::kernels::KCPP_ISA {

// This set's version of every kernel in the list, with the signature of kernels::<name>.
#define KCPP_ISA_DECLARE(f) decltype(kernels::f) f;
KCPP_ISA_KERNELS(KCPP_ISA_DECLARE)
#undef KCPP_ISA_DECLARE

// This set's table, for kernels::isa_kernels() (kernels/isa.cpp).
extern const IsaKernels table;

}  // namespace kerascpp::kernels::KCPP_ISA
