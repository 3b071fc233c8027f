// Fast binary ops with broadcasting, and scale_shift: one switch on the op, then a plain loop that
// the compiler vectorises for each instruction set (kernels/isa.h).
#include "kernels/isa/isa_set.h"

namespace kerascpp::kernels::KCPP_ISA {
namespace {

// The innermost dimension: both operands contiguous, or one of them a broadcast scalar, are the
// cases worth a loop of their own (bias add, scaling); anything else is strided.
template <typename F>
void binary_row(F f, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  } else if (sa == 0 && sb == 1) {
    const float av = *a;
    for (int64_t i = 0; i < n; ++i) y[i] = f(av, b[i]);
  } else if (sa == 1 && sb == 0) {
    const float bv = *b;
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], bv);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i * sa], b[i * sb]);
  }
}

// Walks the outer dimensions recursively (depth = rank, no scratch memory); y advances row by row.
template <typename F>
float* binary_dims(F f, const float* a, const int64_t* as, const float* b, const int64_t* bs, float* y,
                   const int64_t* shape, int rank) {
  if (rank == 1) {
    binary_row(f, a, as[0], b, bs[0], y, shape[0]);
    return y + shape[0];
  }
  for (int64_t i = 0; i < shape[0]; ++i)
    y = binary_dims(f, a + i * as[0], as + 1, b + i * bs[0], bs + 1, y, shape + 1, rank - 1);
  return y;
}

template <typename F>
void binary_impl(F f, const float* a, const int64_t* as, const float* b, const int64_t* bs, float* y,
                 const int64_t* shape, int rank) {
  if (rank == 0) {
    y[0] = f(a[0], b[0]);
    return;
  }
  binary_dims(f, a, as, b, bs, y, shape, rank);
}

}  // namespace

void binary(Binary op, const float* a, const int64_t* as, const float* b, const int64_t* bs, float* y,
            const int64_t* shape, int rank) {
  switch (op) {
    case Binary::add:
      return binary_impl([](float p, float q) { return p + q; }, a, as, b, bs, y, shape, rank);
    case Binary::subtract:
      return binary_impl([](float p, float q) { return p - q; }, a, as, b, bs, y, shape, rank);
    case Binary::multiply:
      return binary_impl([](float p, float q) { return p * q; }, a, as, b, bs, y, shape, rank);
    case Binary::divide:
      return binary_impl([](float p, float q) { return p / q; }, a, as, b, bs, y, shape, rank);
    // NaN propagates (p + q is NaN when either is), as in ref::binary_scalar.
    case Binary::maximum:
      return binary_impl([](float p, float q) { return (p != p || q != q) ? p + q : (p < q ? q : p); }, a, as,
                         b, bs, y, shape, rank);
    case Binary::minimum:
      return binary_impl([](float p, float q) { return (p != p || q != q) ? p + q : (q < p ? q : p); }, a, as,
                         b, bs, y, shape, rank);
    case Binary::prelu:
      return binary_impl([](float p, float q) { return (p < 0.f ? 0.f : p) + q * (p < 0.f ? p : 0.f); }, a,
                         as, b, bs, y, shape, rank);
  }
}

void scale_shift(const float* x, float* y, int64_t n, float scale, float offset) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale + offset;
}

}  // namespace kerascpp::kernels::KCPP_ISA
