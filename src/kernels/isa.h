// Run-time choice of the instruction set for kerascpp's own hot kernels.
//
// The library is built for a baseline CPU (x86-64-v2: SSE4.2, no AVX), so that a binary or wheel
// built on one machine runs on any other. The hot loops (the small matmul, the elementwise and
// activation kernels and their gradients, normalisation, softmax, reductions, Adam's update) are compiled once more
// per instruction set, from the files in kernels/isa/, each set into its own namespace:
//   baseline  x86-64-v2  SSE4.2, POPCNT                           (Nehalem, Bulldozer and later)
//   avx2      x86-64-v3  AVX2, FMA, BMI2                          (Haswell, Zen and later)
//   avx512    x86-64-v4  AVX-512 F/BW/DQ/VL/CD                    (Skylake-X, Zen 4 and later)
// and one set is chosen the first time a kernel runs: the best the CPU has, capped by the environment
// variable KERASCPP_MAX_ISA (baseline | avx2 | avx512, or x86-64-v2/v3/v4), so that a machine with
// AVX-512 can also test what a machine without it runs. oneDNN dispatches by itself (cap it with
// ONEDNN_MAX_CPU_ISA); OpenBLAS too. On other processors there is one set, `baseline`, built for the
// compiler's default target.
//
// The choice is made once per process and never changes, so every thread runs the same arithmetic and
// results stay bit-identical across threads. Each set is tested against the reference kernels.
//
//   kernels::isa_kernels().unary(Unary::relu, x, y, n, 0.f);   // what kernels::unary does
//   std::puts(kernels::isa_choice());  // "avx512 (x86-64-v4): the CPU is x86-64-v4 (AVX-512 ...)"
#pragma once

#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/matmul.h"
#include "kernels/normalization.h"
#include "kernels/optimizer.h"
#include "kernels/recurrent.h"
#include "kernels/reduce.h"
#include "kernels/reduce_axes.h"

namespace kerascpp::kernels {

enum class Isa { baseline, avx2, avx512 };

// The kernels that have a version per instruction set (one list: it drives the table below, the
// per-set declarations in kernels/isa/isa_set.h and each set's table in kernels/isa/table.cpp; the
// forwarders in isa.cpp, which keep each kernel's own signature, are written by hand).
// clang-format off
#define KCPP_ISA_KERNELS(X)                                                                        \
  X(matmul_small) X(matmul_small_bias) X(matmul_transposed_small_rows) X(binary) X(scale_shift) X(unary) X(relu) X(unary_grad) \
  X(relu_grad) X(batch_normalization) X(layer_normalization) X(group_normalization) X(softmax)     \
  X(log_softmax) X(sum) X(l2_normalize) X(reduce_max) X(reduce_mean) X(lstm_cell) X(adam_update)
// clang-format on

// One set of kernels, all compiled for the same instruction set.
struct IsaKernels {
  Isa isa;
  const char* name;  // "avx2 (x86-64-v3)"
#define KCPP_ISA_FIELD(f) decltype(&kernels::f) f;
  KCPP_ISA_KERNELS(KCPP_ISA_FIELD)
#undef KCPP_ISA_FIELD
};

// The set in use: the best this CPU runs, capped by KERASCPP_MAX_ISA. Chosen on the first call;
// throws ValueError there if KERASCPP_MAX_ISA holds something else than the names above.
const IsaKernels& isa_kernels();
// Why that set: "avx2 (x86-64-v3): KERASCPP_MAX_ISA=avx2 (the CPU is x86-64-v4 (AVX-512 ...))".
std::string isa_choice();
// A KERASCPP_MAX_ISA value: a set's name or its x86-64 level, in any case ("AVX2", "x86-64-v2");
// ValueError naming the value otherwise.
Isa parse_isa(const std::string& text);
// Every set this CPU can run, baseline first (the tests check each against the reference kernels).
std::vector<const IsaKernels*> runnable_isa_kernels();

}  // namespace kerascpp::kernels
