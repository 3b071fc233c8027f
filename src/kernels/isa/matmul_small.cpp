// The small matmul: a register-blocked loop with no call, packing or threading overhead, for the
// products below kMatmulSmallMaxWork (see matmul.cpp for the measurements behind the rule), and the
// plain loop for small transposed products (the backward of a Dense layer at training batch sizes).
// Compiled once per instruction set (kernels/isa.h): vf is one AVX register where there is AVX, one
// SSE register on the baseline.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "kernels/isa/isa_set.h"

#if defined(__AVX__) || defined(__SSE2__)
#include <immintrin.h>
#endif

// GCC warns that passing a vector by value changes the ABI where the ISA lacks its registers; these
// helpers are internal and inlined, so no ABI boundary is crossed.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace kerascpp::kernels::KCPP_ISA {
namespace {

// One vector register of floats (GCC/Clang vector extension): 8 lanes where there is AVX, 4 (SSE)
// on the baseline. A 32-byte vector on a CPU without AVX would be split by the compiler, but it then
// keeps the accumulators in memory (measured: 40x slower than AVX2 instead of about 2x).
#if defined(__AVX__)
using vf = float __attribute__((vector_size(32)));
constexpr int kV = 8;
#else
using vf = float __attribute__((vector_size(16)));
constexpr int kV = 4;
#endif
// Unrolling the row loops early lets the compiler keep acc[MR][2] in registers; otherwise the masked
// loads (which may alias a vector array) make it store the accumulators on every iteration.
#define KCPP_UNROLL _Pragma("GCC unroll 8")
// Rows of c per register block: full panels use 6 x 2 accumulators + 2 loads + 1 broadcast = 15 of
// the 16 vector registers; edge panels also hold two masks with AVX, so they take 4 rows (13).
constexpr int kMR = 6;
constexpr int kMREdge = 4;
constexpr int kNB = 2 * kV;   // columns of c per register block: two vectors
constexpr int64_t kKC = 256;  // k block: a packed (kKC x kNB) panel of b is 16 KB (AVX) and stays in L1
                              // (32 KB with AVX-512's 32 columns: about all of L1 where k >= 256)

// Unaligned whole-vector load and store. Through intrinsics where there are any: memcpy would take
// the accumulators' address and keep them in memory inside the loop.
#if defined(__AVX__)
inline vf load(const float* p) { return (vf)_mm256_loadu_ps(p); }
inline void store(float* p, vf v) { _mm256_storeu_ps(p, (__m256)v); }
#elif defined(__SSE2__)
inline vf load(const float* p) { return (vf)_mm_loadu_ps(p); }
inline void store(float* p, vf v) { _mm_storeu_ps(p, (__m128)v); }
#else
inline vf load(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
#endif

// The first `count` (0..kV) lanes of a vector, for the last columns of c. With AVX: masked loads never touch
// the masked-off lanes, so b and c are read in place with no padding or packing (packing with scalar
// stores and reading back whole vectors stalls store forwarding). Stores go lane by lane: AVX masked
// stores are microcoded and slow on AMD cores.
#if defined(__AVX__)
alignas(64) constexpr int32_t kMaskTable[2 * kV] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
struct Lanes {
  int count;
  __m256i mask;
  explicit Lanes(int c)
      : count(c), mask(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskTable + kV - c))) {}
};
inline vf load(const float* p, const Lanes& l) { return (vf)_mm256_maskload_ps(p, l.mask); }
// Store the first l.count lanes as 4 + 2 + 1: indexing lanes by a variable would keep the
// accumulators in memory.
inline void store(float* p, vf v, const Lanes& l) {
  __m128 part = _mm256_castps256_ps128((__m256)v);
  int count = l.count;
  if (count == kV) return store(p, v);
  if (count & 4) {
    _mm_storeu_ps(p, part);
    p += 4;
    part = _mm256_extractf128_ps((__m256)v, 1);
  }
  if (count & 2) {
    _mm_storel_pi(reinterpret_cast<__m64*>(p), part);
    p += 2;
    part = _mm_movehl_ps(part, part);
  }
  if (count & 1) _mm_store_ss(p, part);
}
#elif defined(__SSE2__)
// No masked loads: the first lanes are loaded and stored as 2 + 1 (a round trip through memory
// would stall store forwarding, and indexing the vector would keep it in memory).
struct Lanes {
  int count;
  explicit Lanes(int c) : count(c) {}
};
inline vf load(const float* p, const Lanes& l) {
  switch (l.count) {
    case 0:
      return vf{};
    case 1:
      return (vf)_mm_load_ss(p);
    case 2:  // 64-bit integer load: no float data read through a double*
      return (vf)_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    case 3:
      return (vf)_mm_movelh_ps(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))),
                               _mm_load_ss(p + 2));
    default:
      return load(p);
  }
}
inline void store(float* p, vf v, const Lanes& l) {
  __m128 part = (__m128)v;
  if (l.count == kV) return store(p, v);
  if (l.count & 2) {
    _mm_storel_pi(reinterpret_cast<__m64*>(p), part);
    p += 2;
    part = _mm_movehl_ps(part, part);
  }
  if (l.count & 1) _mm_store_ss(p, part);
}
#else
struct Lanes {
  int count;
  explicit Lanes(int c) : count(c) {}
};
inline vf load(const float* p, const Lanes& l) {
  alignas(16) float t[kV] = {};
  for (int j = 0; j < l.count; ++j) t[j] = p[j];
  return load(t);
}
inline void store(float* p, vf v, const Lanes& l) {
  alignas(16) float t[kV];
  store(t, v);
  for (int j = 0; j < l.count; ++j) p[j] = t[j];
}
#endif

// panel: (kc, kNB) = b[0:kc, 0:kNB]; b rows are n apart. Packed when many row blocks reuse it: a
// contiguous 16 KB panel stays in L1, while rows of b n floats apart can crowd a few cache sets
// (n a power of two).
void pack_panel(const float* b, int64_t n, int64_t kc, float* panel) {
  for (int64_t p = 0; p < kc; ++p) {
    store(panel + p * kNB, load(b + p * n));
    store(panel + p * kNB + kV, load(b + p * n + kV));
  }
}

// c[0:MR, 0:nb] = (accumulate ? c : 0) + a[0:MR, 0:kc] @ bp[0:kc, 0:nb]; rows of a, bp and c are
// lda, ldb and n apart. kFull: nb == kNB, plain loads; otherwise masked loads of the first nb columns.
// MR is fixed so that the 2*MR accumulators live in registers. The epilogue (the last k block of
// matmul_small_bias): + bias[0:nb] when bias is not null, then relu, each rounded as bias_add and relu
// round them.
template <int MR, bool kFull>
void block(const float* a, int64_t lda, const float* bp, int64_t ldb, float* c, int64_t n, int64_t kc, int nb,
           bool accumulate, const float* bias, bool relu) {
  const Lanes l0(std::min(nb, kV)), l1(std::max(nb - kV, 0));
  vf acc[MR][2];
  KCPP_UNROLL for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = vf{};
  for (int64_t p = 0; p < kc; ++p) {
    const float* bq = bp + p * ldb;
    vf b0 = kFull ? load(bq) : load(bq, l0);
    vf b1 = kFull ? load(bq + kV) : load(bq + kV, l1);
    KCPP_UNROLL for (int r = 0; r < MR; ++r) {
      float ar = a[r * lda + p];
      acc[r][0] += ar * b0;
      acc[r][1] += ar * b1;
    }
  }
  if (accumulate) {
    KCPP_UNROLL for (int r = 0; r < MR; ++r) {
      const float* cr = c + r * n;
      acc[r][0] += kFull ? load(cr) : load(cr, l0);
      acc[r][1] += kFull ? load(cr + kV) : load(cr + kV, l1);
    }
  }
  if (bias) {
    const vf b0 = kFull ? load(bias) : load(bias, l0), b1 = kFull ? load(bias + kV) : load(bias + kV, l1);
    KCPP_UNROLL for (int r = 0; r < MR; ++r) acc[r][0] += b0, acc[r][1] += b1;
  }
  if (relu) {
    const vf zero{};
    KCPP_UNROLL for (int r = 0; r < MR; ++r) {
      acc[r][0] = acc[r][0] < zero ? zero : acc[r][0];
      acc[r][1] = acc[r][1] < zero ? zero : acc[r][1];
    }
  }
  KCPP_UNROLL for (int r = 0; r < MR; ++r) {
    float* cr = c + r * n;
    if (kFull) {
      store(cr, acc[r][0]);
      store(cr + kV, acc[r][1]);
    } else {
      store(cr, acc[r][0], l0);
      store(cr + kV, acc[r][1], l1);
    }
  }
}

using BlockFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t, int64_t, int, bool,
                        const float*, bool);
// kBlocks[full][rows]
constexpr BlockFn kBlocks[2][kMR + 1] = {
    {nullptr, block<1, false>, block<2, false>, block<3, false>, block<4, false>, nullptr, nullptr},
    {nullptr, block<1, true>, block<2, true>, block<3, true>, block<4, true>, block<5, true>,
     block<6, true>}};

}  // namespace

void matmul_small(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  matmul_small_bias(a, b, nullptr, false, c, m, n, k);
}

namespace {

// matmul_small_bias's loops: k blocks, column blocks, row blocks. `panel` (kKC x kNB floats, 64-byte
// aligned) takes b's full panels when several row blocks reuse them; null: b is read in place.
void run_blocks(const float* a, const float* b, const float* bias, bool relu, float* c, int64_t m, int64_t n,
                int64_t k, float* panel) {
  for (int64_t p0 = 0; p0 < k; p0 += kKC) {
    int64_t kc = std::min(kKC, k - p0);
    const bool last = p0 + kc == k;
    for (int64_t j0 = 0; j0 < n; j0 += kNB) {
      int nb = static_cast<int>(std::min<int64_t>(kNB, n - j0));
      bool full = nb == kNB;
      const float* bp = b + p0 * n + j0;
      int64_t ldb = n;
      if (full && panel) {
        pack_panel(bp, n, kc, panel);
        bp = panel;
        ldb = kNB;
      }
      const int64_t rows = full ? kMR : kMREdge;
      for (int64_t i0 = 0; i0 < m; i0 += rows) {
        int mr = static_cast<int>(std::min<int64_t>(rows, m - i0));
        kBlocks[full][mr](a + i0 * k + p0, k, bp, ldb, c + i0 * n + j0, n, kc, nb, p0 > 0,
                          last && bias ? bias + j0 : nullptr, last && relu);
      }
    }
  }
}

#if defined(__AVX512F__)
// Where the set has AVX-512, the products of more than kMR rows run on blocks of kNB16 columns in two
// 16-lane registers and up to kMR16 rows (its 32 vector registers hold the 16 accumulators; masks in
// their own registers cut the last columns). Each element of c gets block's operations in the same
// order (its products over p in increasing order within each k block of kKC, then + c of the k blocks
// before, + bias, relu), so the bits are block's: the width only changes how many elements share a
// register. On a 2-core Intel Xeon with AVX-512, one thread, batch 1,024: a Dense(64, tanh) x 3 stack
// 0.26-0.28 -> 0.18-0.19 ms (the 8-lane blocks had been 0.23 ms of it), the seed MLP 15.5 -> 10.2 us.
using v16 = float __attribute__((vector_size(64)));
constexpr int kV16 = 16;
constexpr int kMR16 = 8;
constexpr int kNB16 = 2 * kV16;

inline __mmask16 lanes16(int count) { return static_cast<__mmask16>((1u << count) - 1u); }  // count 0..16
inline v16 load16(const float* p) { return (v16)_mm512_loadu_ps(p); }
inline v16 load16(const float* p, __mmask16 m) { return (v16)_mm512_maskz_loadu_ps(m, p); }
inline void store16(float* p, v16 v) { _mm512_storeu_ps(p, (__m512)v); }
inline void store16(float* p, v16 v, __mmask16 m) { _mm512_mask_storeu_ps(p, m, (__m512)v); }

void pack_panel16(const float* b, int64_t n, int64_t kc, float* panel) {
  for (int64_t p = 0; p < kc; ++p) {
    store16(panel + p * kNB16, load16(b + p * n));
    store16(panel + p * kNB16 + kV16, load16(b + p * n + kV16));
  }
}

// block's contract with kNB16 columns: c[0:MR, 0:nb] = (accumulate ? c : 0) + a @ bp, then bias, relu.
// kRegs: the registers a row of nb columns takes (1 for nb <= 16: no work on empty lanes); kMasked:
// nb < kRegs * 16, so the last register's loads and stores are masked.
template <int MR, int kRegs, bool kMasked>
void block16(const float* a, int64_t lda, const float* bp, int64_t ldb, float* c, int64_t n, int64_t kc,
             int nb, bool accumulate, const float* bias, bool relu) {
  const __mmask16 last = lanes16(nb - (kRegs - 1) * kV16);
  auto ld = [last](const float* q, int j) { return kMasked && j == kRegs - 1 ? load16(q, last) : load16(q); };
  v16 acc[MR][kRegs];
  KCPP_UNROLL for (int r = 0; r < MR; ++r) for (int j = 0; j < kRegs; ++j) acc[r][j] = v16{};
  for (int64_t p = 0; p < kc; ++p) {
    const float* bq = bp + p * ldb;
    v16 bv[kRegs];
    for (int j = 0; j < kRegs; ++j) bv[j] = ld(bq + j * kV16, j);
    KCPP_UNROLL for (int r = 0; r < MR; ++r) {
      const float ar = a[r * lda + p];
      for (int j = 0; j < kRegs; ++j) acc[r][j] += ar * bv[j];
    }
  }
  if (accumulate) {
    KCPP_UNROLL for (int r = 0; r < MR; ++r) for (int j = 0; j < kRegs; ++j) acc[r][j] +=
        ld(c + r * n + j * kV16, j);
  }
  if (bias) {
    v16 bv[kRegs];
    for (int j = 0; j < kRegs; ++j) bv[j] = ld(bias + j * kV16, j);
    KCPP_UNROLL for (int r = 0; r < MR; ++r) for (int j = 0; j < kRegs; ++j) acc[r][j] += bv[j];
  }
  if (relu) {
    const v16 zero{};
    KCPP_UNROLL for (int r = 0; r < MR; ++r) for (int j = 0; j < kRegs; ++j) acc[r][j] =
        acc[r][j] < zero ? zero : acc[r][j];  // as block: NaN and -0 kept
  }
  KCPP_UNROLL for (int r = 0; r < MR; ++r) for (int j = 0; j < kRegs; ++j) {
    float* q = c + r * n + j * kV16;
    if (kMasked && j == kRegs - 1)
      store16(q, acc[r][j], last);
    else
      store16(q, acc[r][j]);
  }
}

template <int kRegs, bool kMasked>
constexpr BlockFn kRows16[kMR16 + 1] = {nullptr,
                                        block16<1, kRegs, kMasked>,
                                        block16<2, kRegs, kMasked>,
                                        block16<3, kRegs, kMasked>,
                                        block16<4, kRegs, kMasked>,
                                        block16<5, kRegs, kMasked>,
                                        block16<6, kRegs, kMasked>,
                                        block16<7, kRegs, kMasked>,
                                        block16<8, kRegs, kMasked>};

// The blocks for nb columns (1..kNB16).
const BlockFn* blocks16(int nb) {
  if (nb == kNB16) return kRows16<2, false>;
  if (nb > kV16) return kRows16<2, true>;
  return nb == kV16 ? kRows16<1, false> : kRows16<1, true>;
}

// run_blocks's loops over block16, with b's full panels packed (kKC x kNB16 floats, 64-byte aligned).
void run_blocks16(const float* a, const float* b, const float* bias, bool relu, float* c, int64_t m,
                  int64_t n, int64_t k, float* panel) {
  for (int64_t p0 = 0; p0 < k; p0 += kKC) {
    const int64_t kc = std::min(kKC, k - p0);
    const bool last = p0 + kc == k;
    for (int64_t j0 = 0; j0 < n; j0 += kNB16) {
      const int nb = static_cast<int>(std::min<int64_t>(kNB16, n - j0));
      const bool full = nb == kNB16;
      const float* bp = b + p0 * n + j0;
      int64_t ldb = n;
      if (full) {
        pack_panel16(bp, n, kc, panel);
        bp = panel;
        ldb = kNB16;
      }
      const BlockFn* rows = blocks16(nb);
      for (int64_t i0 = 0; i0 < m; i0 += kMR16) {
        const int mr = static_cast<int>(std::min<int64_t>(kMR16, m - i0));
        rows[mr](a + i0 * k + p0, k, bp, ldb, c + i0 * n + j0, n, kc, nb, p0 > 0,
                 last && bias ? bias + j0 : nullptr, last && relu);
      }
    }
  }
}
#endif

// One row of c against a b of kStreamFloats or more (a Dense layer at batch 1): b read row after row,
// as it lies in memory, into the accumulators of a slab of kSlab columns held in L1, where block<1>
// walks b down its column panels, one cache line per row n floats apart (which the hardware prefetcher
// follows badly, and which crowds a few cache sets where n is a power of two). Each element of c gets
// block's operations in block's order (its products over p in increasing order from 0 within each k
// block of kKC, then + c of the k blocks before, + bias, relu): the same bits. bench_native, batch 1,
// Intel Xeon, on the AVX-512, AVX2 and baseline sets: Dense 64x256 1.04 -> 0.91 us (baseline 1.82 ->
// 1.3), 256x256 4.0 -> 2.6 us, 1024x1024 357 -> 138 us; ResNet50's 2048x1000 classifier from 2% of
// a call to 1.1%. Below 64 KB (Dense(64) x 64), or with fewer columns than one register block,
// block<1> keeps its accumulators in registers (faster with AVX2 at 64 x 64).
constexpr int64_t kSlab = 1024;
constexpr int64_t kStreamFloats = int64_t{1} << 14;  // 64 KB of b

// Not inlined: its 4 KB of accumulators stay off the frames of the small calls (as run_packed's panel).
__attribute__((noinline)) void row_stream(const float* a, const float* b, const float* bias, bool relu,
                                          float* c, int64_t n, int64_t k) {
  alignas(64) float acc[kSlab];
  for (int64_t j0 = 0; j0 < n; j0 += kSlab) {
    const int64_t w = std::min(kSlab, n - j0), wv = w / kV * kV;
    for (int64_t p0 = 0; p0 < k; p0 += kKC) {
      const int64_t kc = std::min(kKC, k - p0);
      std::fill(acc, acc + w, 0.f);
      const float* ap = a + p0;
      const float* bp = b + p0 * n + j0;
      int64_t p = 0;
      for (; p + 4 <= kc; p += 4) {  // four rows of b per pass over the accumulators
        const float a0 = ap[p], a1 = ap[p + 1], a2 = ap[p + 2], a3 = ap[p + 3];
        const float *b0 = bp + p * n, *b1 = b0 + n, *b2 = b1 + n, *b3 = b2 + n;
        for (int64_t j = 0; j < wv; j += kV) {
          vf v = load(acc + j);
          v += a0 * load(b0 + j);
          v += a1 * load(b1 + j);
          v += a2 * load(b2 + j);
          v += a3 * load(b3 + j);
          store(acc + j, v);
        }
        for (int64_t j = wv; j < w; ++j) {
          float v = acc[j];
          v += a0 * b0[j];
          v += a1 * b1[j];
          v += a2 * b2[j];
          v += a3 * b3[j];
          acc[j] = v;
        }
      }
      for (; p < kc; ++p) {
        const float ar = ap[p];
        const float* br = bp + p * n;
        for (int64_t j = 0; j < wv; j += kV) store(acc + j, load(acc + j) + ar * load(br + j));
        for (int64_t j = wv; j < w; ++j) acc[j] += ar * br[j];
      }
      const bool last = p0 + kc == k;
      float* cj = c + j0;
      for (int64_t j = 0; j < w; ++j) {
        float v = acc[j];
        if (p0 > 0) v += cj[j];
        if (last && bias) v += bias[j0 + j];
        if (last && relu) v = v < 0.f ? 0.f : v;  // as block: NaN and -0 kept
        cj[j] = v;
      }
    }
  }
}

#if defined(__AVX512F__)
// One row of up to 16 columns and k <= kKC (a small Dense layer's batch-1 call): block<1>'s arithmetic,
// the same operations in the same order per element (products accumulated over k, then + bias, then
// relu), in one 16-lane register with masked loads and stores instead of two 8-lane ones.
void row16(const float* a, const float* b, const float* bias, bool relu, float* c, int64_t n, int64_t k) {
  using v16 = float __attribute__((vector_size(64)));
  const __mmask16 lanes = static_cast<__mmask16>((1u << n) - 1);
  v16 acc{};
  for (int64_t p = 0; p < k; ++p) acc += a[p] * (v16)_mm512_maskz_loadu_ps(lanes, b + p * n);
  if (bias) acc += (v16)_mm512_maskz_loadu_ps(lanes, bias);
  if (relu) {
    const v16 zero{};
    acc = acc < zero ? zero : acc;  // as block: NaN and -0 kept
  }
  _mm512_mask_storeu_ps(c, lanes, (__m512)acc);
}
#endif

// With the panel on this function's stack (16 KB, 32 KB with AVX-512; 64-byte aligned), so that the calls
// without one (a batch of up to kMR rows, a Dense layer at batch 1) keep a small frame: no realignment, no
// stack probes.
__attribute__((noinline)) void run_packed(const float* a, const float* b, const float* bias, bool relu, float* c,
                                          int64_t m, int64_t n, int64_t k) {
#if defined(__AVX512F__)
  alignas(64) float panel[kKC * kNB16];  // kernels never allocate (32 KB here)
  run_blocks16(a, b, bias, relu, c, m, n, k, panel);
#else
  alignas(64) float panel[kKC * kNB];  // kernels never allocate
  run_blocks(a, b, bias, relu, c, m, n, k, panel);
#endif
}

}  // namespace

void matmul_small_bias(const float* a, const float* b, const float* bias, bool relu, float* c, int64_t m, int64_t n,
                       int64_t k) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const float v = bias ? 0.f + bias[j] : 0.f;
        c[i * n + j] = relu && v < 0.f ? 0.f : v;
      }
    return;
  }
  // More rows than one block: packed panels (with AVX-512, 7 or 8 rows pack for their one block too).
  if (m > kMR) return run_packed(a, b, bias, relu, c, m, n, k);
#if defined(__AVX512F__)
  if (m == 1 && n <= 16 && k <= kKC) return row16(a, b, bias, relu, c, n, k);  // k in one block, as block's
#endif
  if (m == 1 && n >= kNB && n * k >= kStreamFloats) return row_stream(a, b, bias, relu, c, n, k);
  run_blocks(a, b, bias, relu, c, m, n, k, nullptr);
}

// Rows [row_begin, row_end) of c: (m, n) = op(a) @ op(b) for m*n*k <= kMatmulSmallMaxWork, k > 0: j
// innermost so that it vectorises.
namespace {

// The transposed products below give each c element its k terms in increasing p from 0, one
// multiply-add each (fused where the set has FMA), whatever the blocking: the bits of the plain loop
// (transposed_rows_plain), and of any split of the rows between threads.

// Rows [r0, r1) of c, one term after another: any transposes.
void transposed_rows_plain(bool transpose_a, bool transpose_b, const float* a, const float* b, float* c, int64_t m,
                           int64_t n, int64_t k, int64_t r0, int64_t r1) {
  std::memset(c + r0 * n, 0, sizeof(float) * (r1 - r0) * n);
  for (int64_t i = r0; i < r1; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const float av = transpose_a ? a[p * m + i] : a[i * k + p];
      float* ci = c + i * n;
      if (transpose_b)
        for (int64_t j = 0; j < n; ++j) ci[j] += av * b[j * k + p];
      else
        for (int64_t j = 0; j < n; ++j) ci[j] += av * b[p * n + j];
    }
}

// a^T b (a Dense layer's kernel gradient x^T dy; a stored (k, m), b (k, n)): kV rows of c at once,
// which are kV neighbouring floats of each row of a, against NJ columns of b held in NJ accumulators.
// It was a plain loop whose additions into c waited on each other: 5 % of a small CNN's epoch.
template <int NJ>
void at_b_block(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t i, int64_t j0) {
  vf acc[NJ] = {};
  for (int64_t p = 0; p < k; ++p) {
    const vf av = load(a + p * m + i);
    const float* bp = b + p * n + j0;
    for (int jj = 0; jj < NJ; ++jj) acc[jj] += av * bp[jj];
  }
  for (int jj = 0; jj < NJ; ++jj)
    for (int l = 0; l < kV; ++l) c[(i + l) * n + j0 + jj] = acc[jj][l];
}

void at_b_rows(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, int64_t r0, int64_t r1) {
  constexpr int kJ = 8;
  int64_t i = r0;
  for (; i + kV <= r1; i += kV)
    for (int64_t j0 = 0; j0 < n; j0 += kJ) {
      switch (std::min<int64_t>(kJ, n - j0)) {
        case 8: at_b_block<8>(a, b, c, m, n, k, i, j0); break;
        case 7: at_b_block<7>(a, b, c, m, n, k, i, j0); break;
        case 6: at_b_block<6>(a, b, c, m, n, k, i, j0); break;
        case 5: at_b_block<5>(a, b, c, m, n, k, i, j0); break;
        case 4: at_b_block<4>(a, b, c, m, n, k, i, j0); break;
        case 3: at_b_block<3>(a, b, c, m, n, k, i, j0); break;
        case 2: at_b_block<2>(a, b, c, m, n, k, i, j0); break;
        default: at_b_block<1>(a, b, c, m, n, k, i, j0); break;
      }
    }
  if (i < r1) transposed_rows_plain(true, false, a, b, c, m, n, k, i, r1);
}

// a b^T (a Dense layer's input gradient dy W^T; a (m, k), b stored (n, k)): b laid out as (k, n)
// once, then each row of c is kV columns at a time, four vectors deep.
// bt: n * k floats of scratch.
void a_bt_rows(const float* a, const float* b, float* c, int64_t n, int64_t k, int64_t r0, int64_t r1, float* bt) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) bt[p * n + j] = b[j * k + p];
  for (int64_t i = r0; i < r1; ++i) {
    const float* ai = a + i * k;
    float* ci = c + i * n;
    int64_t j = 0;
    for (; j + 4 * kV <= n; j += 4 * kV) {
      vf acc[4] = {};
      for (int64_t p = 0; p < k; ++p) {
        const float* row = bt + p * n + j;
        for (int q = 0; q < 4; ++q) acc[q] += ai[p] * load(row + q * kV);
      }
      for (int q = 0; q < 4; ++q) store(ci + j + q * kV, acc[q]);
    }
    for (; j < n; j += kV) {
      const Lanes lanes(static_cast<int>(std::min<int64_t>(kV, n - j)));
      vf acc = {};
      for (int64_t p = 0; p < k; ++p) acc += ai[p] * load(bt + p * n + j, lanes);
      store(ci + j, acc, lanes);
    }
  }
}

}  // namespace

void matmul_transposed_small_rows(bool transpose_a, bool transpose_b, const float* a, const float* b, float* c,
                                  int64_t m, int64_t n, int64_t k, int64_t row_begin, int64_t row_end) {
  if (transpose_a && !transpose_b) return at_b_rows(a, b, c, m, n, k, row_begin, row_end);
  if (!transpose_a && transpose_b) {
    // malloc, not a std::vector: no C++ allocation (and its exception handling) is compiled per set
    // (the isa_symbols test); without the memory, the plain loop.
    if (float* bt = static_cast<float*>(std::malloc(sizeof(float) * static_cast<size_t>(std::max<int64_t>(1, n * k))))) {
      a_bt_rows(a, b, c, n, k, row_begin, row_end, bt);
      std::free(bt);
      return;
    }
  }
  transposed_rows_plain(transpose_a, transpose_b, a, b, c, m, n, k, row_begin, row_end);
}

}  // namespace kerascpp::kernels::KCPP_ISA
