// The choice of an instruction set for the kernels of kernels/isa/ (see isa.h), and the kernels::
// functions of that list, which forward to the chosen set.
#include "kernels/isa.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>
#if defined(KCPP_ISA_X86) && defined(__clang__)
#include <cpuid.h>
#endif

#include "kerascpp/error.h"
#include "kernels/dispatch_log.h"
#include "kernels/parallel.h"

namespace kerascpp::kernels {

// The sets this build has (CMakeLists.txt compiles kernels/isa/ once for each).
namespace baseline {
extern const IsaKernels table;
}
#if defined(KCPP_ISA_X86)
namespace avx2 {
extern const IsaKernels table;
}
namespace avx512 {
extern const IsaKernels table;
}
#endif

namespace {

struct Choice {
  const IsaKernels* set;
  std::string why;
};

// The best set this CPU runs, and the features that decided it. __builtin_cpu_supports also checks
// that the OS saves the wider registers (XCR0). The x86-64 level names match -march's levels exactly
// (GCC 12, Clang 16); older compilers check the features those levels add that code generation uses.
Isa detect(std::string* features) {
#if defined(KCPP_ISA_X86)
  __builtin_cpu_init();
#if (defined(__clang__) && __clang_major__ >= 16) || (!defined(__clang__) && __GNUC__ >= 12)
  const bool v3 = __builtin_cpu_supports("x86-64-v3");
  const bool v4 = __builtin_cpu_supports("x86-64-v4");
#else
#if defined(__clang__)  // clang before 16 has no "f16c" or "movbe" here (make fuzz builds with clang 14)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c_movbe = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) && (ecx & bit_MOVBE);
#else
  const bool f16c_movbe = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("movbe");
#endif
  const bool v3 = __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
                  __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
                  __builtin_cpu_supports("bmi2") && f16c_movbe;
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                  __builtin_cpu_supports("avx512cd");
#endif
  *features = v4   ? "the CPU is x86-64-v4 (AVX-512 F/BW/DQ/VL/CD)"
              : v3 ? "the CPU is x86-64-v3 (AVX2, FMA, BMI1/2), not v4"
                   : "the CPU is not x86-64-v3 (it lacks AVX2, FMA or BMI)";
  return v4 ? Isa::avx512 : v3 ? Isa::avx2 : Isa::baseline;
#else
  *features = "the only set built for this processor";
  return Isa::baseline;
#endif
}

const IsaKernels& table_of(Isa isa) {
#if defined(KCPP_ISA_X86)
  if (isa == Isa::avx512) return avx512::table;
  if (isa == Isa::avx2) return avx2::table;
#endif
  return baseline::table;
}

}  // namespace

Isa parse_isa(const std::string& text) {
  std::string v = text;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v == "baseline" || v == "x86-64-v2" || v == "sse4.2" || v == "sse42") return Isa::baseline;
  if (v == "avx2" || v == "x86-64-v3") return Isa::avx2;
  if (v == "avx512" || v == "x86-64-v4") return Isa::avx512;
  KCPP_THROW(ValueError,
             "KERASCPP_MAX_ISA must be one of baseline (x86-64-v2), avx2 (x86-64-v3) or avx512 (x86-64-v4). "
             "Received: KERASCPP_MAX_ISA=",
             text);
}

namespace {

Choice choose() {
  std::string features;
  const Isa best = detect(&features);
  const char* cap = std::getenv("KERASCPP_MAX_ISA");
  if (cap == nullptr || *cap == '\0') return {&table_of(best), features};
  const Isa capped = std::min(best, parse_isa(cap));
  return {&table_of(capped), std::string("KERASCPP_MAX_ISA=") + cap + " (" + features + ")"};
}

const Choice& choice() {
  static const Choice c = [] {  // once per process; a throw leaves it to the next call
    Choice made = choose();
    log_dispatch("kernels", "instruction set", made.set->name, made.why);
    return made;
  }();
  return c;
}

}  // namespace

const IsaKernels& isa_kernels() { return *choice().set; }

std::string isa_choice() { return std::string(choice().set->name) + ": " + choice().why; }

std::vector<const IsaKernels*> runnable_isa_kernels() {
  std::string features;
  const Isa best = detect(&features);
  std::vector<const IsaKernels*> out;
  for (Isa isa : {Isa::baseline, Isa::avx2, Isa::avx512})
    if (isa <= best && table_of(isa).isa == isa) out.push_back(&table_of(isa));
  return out;
}

// The kernels:: functions of the list forward to the chosen set (one indirect call).
void matmul_small(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  isa_kernels().matmul_small(a, b, c, m, n, k);
}
void matmul_small_bias(const float* a, const float* b, const float* bias, bool relu, float* c, int64_t m, int64_t n,
                       int64_t k) {
  isa_kernels().matmul_small_bias(a, b, bias, relu, c, m, n, k);
}
void matmul_transposed_small_rows(bool transpose_a, bool transpose_b, const float* a, const float* b, float* c,
                                  int64_t m, int64_t n, int64_t k, int64_t row_begin, int64_t row_end) {
  isa_kernels().matmul_transposed_small_rows(transpose_a, transpose_b, a, b, c, m, n, k, row_begin, row_end);
}
// A Dense layer's backward at training batch sizes (a small CNN's (1600, 128) @ (128, 10)): rows of c
// split between the threads, from about 64k multiply-adds each.
void matmul_transposed_small(bool transpose_a, bool transpose_b, const float* a, const float* b, float* c,
                             int64_t m, int64_t n, int64_t k) {
  const auto& rows = isa_kernels().matmul_transposed_small_rows;
  parallel_chunks(m, std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, n * k)),
                  [&](int64_t i0, int64_t i1) { rows(transpose_a, transpose_b, a, b, c, m, n, k, i0, i1); }, 1);
}
// The elementwise kernels split big loops between the engine's threads (kernels/parallel.h); each
// element is computed as on one thread.
void binary(Binary op, const float* a, const int64_t* a_strides, const float* b, const int64_t* b_strides,
            float* y, const int64_t* shape, int rank) {
  int64_t inner = 1;  // y is contiguous: chunks of rows of the outer axis
  for (int d = 1; d < rank; ++d) inner *= shape[d];
  if (rank == 0 || inner == 0) return isa_kernels().binary(op, a, a_strides, b, b_strides, y, shape, rank);
  parallel_chunks(shape[0], (kElementwiseGrain + inner - 1) / inner, [&](int64_t r0, int64_t r1) {
    if (r0 == 0 && r1 == shape[0]) return isa_kernels().binary(op, a, a_strides, b, b_strides, y, shape, rank);
    std::vector<int64_t> rows(shape, shape + rank);
    rows[0] = r1 - r0;
    isa_kernels().binary(op, a + r0 * a_strides[0], a_strides, b + r0 * b_strides[0], b_strides, y + r0 * inner,
                         rows.data(), rank);
  }, 1);
}
void scale_shift(const float* x, float* y, int64_t n, float scale, float offset) {
  parallel_chunks(n, kElementwiseGrain,
                  [&](int64_t b, int64_t e) { isa_kernels().scale_shift(x + b, y + b, e - b, scale, offset); });
}
void unary(Unary op, const float* x, float* y, int64_t n, float alpha) {
  parallel_chunks(n, kElementwiseGrain, [&](int64_t b, int64_t e) { isa_kernels().unary(op, x + b, y + b, e - b, alpha); });
}
void relu(const float* x, float* y, int64_t n, float negative_slope, float max_value, float threshold) {
  parallel_chunks(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    isa_kernels().relu(x + b, y + b, e - b, negative_slope, max_value, threshold);
  });
}
void unary_grad(Unary op, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                float alpha) {
  parallel_chunks(n, kElementwiseGrain, [&](int64_t b, int64_t e) {  // x or y may be null (not needed)
    isa_kernels().unary_grad(op, x ? x + b : x, y ? y + b : y, dy + b, dx + b, e - b, alpha);
  });
}
void relu_grad(const float* x, const float* dy, float* dx, int64_t n, float negative_slope, float max_value,
               float threshold) {
  parallel_chunks(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    isa_kernels().relu_grad(x + b, dy + b, dx + b, e - b, negative_slope, max_value, threshold);
  });
}
void batch_normalization(const float* x, float* y, const float* scale, const float* shift, int64_t outer,
                         int64_t channels, int64_t inner) {
  isa_kernels().batch_normalization(x, y, scale, shift, outer, channels, inner);
}
void layer_normalization(const float* x, float* y, const float* gamma, const float* beta, int64_t outer,
                         int64_t n, int64_t inner, float epsilon, bool rms_scaling) {
  isa_kernels().layer_normalization(x, y, gamma, beta, outer, n, inner, epsilon, rms_scaling);
}
void group_normalization(const float* x, float* y, const float* gamma, const float* beta, int64_t outer,
                         int64_t pre, int64_t groups, int64_t group_size, int64_t post, float epsilon) {
  isa_kernels().group_normalization(x, y, gamma, beta, outer, pre, groups, group_size, post, epsilon);
}
void lstm_cell(float* gates, const float* c, int64_t n, const RnnActivations& a, float* act_c, float* h_out,
               float* c_out) {
  isa_kernels().lstm_cell(gates, c, n, a, act_c, h_out, c_out);
}
void softmax(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  isa_kernels().softmax(x, y, outer, axis, inner);
}
void log_softmax(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  isa_kernels().log_softmax(x, y, outer, axis, inner);
}
void sum(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  isa_kernels().sum(x, y, outer, axis, inner);
}
void l2_normalize(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner, float epsilon) {
  isa_kernels().l2_normalize(x, y, outer, axis, inner, epsilon);
}
void reduce_max(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  isa_kernels().reduce_max(x, y, outer, axis, inner);
}
void reduce_mean(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  isa_kernels().reduce_mean(x, y, outer, axis, inner);
}
void adam_update(const float* g, float* x, float* m, float* v, float* vhat, int64_t n, const AdamStep& s) {
  isa_kernels().adam_update(g, x, m, v, vhat, n, s);
}

}  // namespace kerascpp::kernels
