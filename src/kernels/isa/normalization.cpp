// Fast normalisation kernels (contracts in normalization.h). Statistics in double with independent
// partial sums (vectorisable); the elementwise pass in float along the contiguous dimension.
#include <algorithm>
#include <cmath>

#include "kernels/isa/isa_set.h"

namespace kerascpp::kernels::KCPP_ISA {
namespace {

constexpr int64_t kChunk = 64;  // inner positions handled together when the reduced axis is strided
constexpr int kLanes = 8;       // independent partial sums along a contiguous row

// sum of (x[a] - shift)^power (power 1 or 2) over a contiguous row.
template <int power>
double row_sum(const float* x, int64_t n, double shift) {
  double part[kLanes] = {};
  int64_t a = 0;
  for (; a + kLanes <= n; a += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      const double d = double(x[a + j]) - shift;
      part[j] += power == 1 ? d : d * d;
    }
  double total = 0.0;
  for (; a < n; ++a) {
    const double d = double(x[a]) - shift;
    total += power == 1 ? d : d * d;
  }
  for (int j = 0; j < kLanes; ++j) total += part[j];
  return total;
}

// y[k] = (x[k] - mean) * inv * gamma[k] + beta[k] over a contiguous row; rms: x[k] * inv * gamma[k].
void normalize_row(const float* x, float* y, const float* gamma, const float* beta, int64_t n, float mean,
                   float inv, bool rms) {
  const float m = rms ? 0.f : mean;
  if (gamma && beta && !rms) {
    for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - m) * (inv * gamma[k]) + beta[k];
  } else if (gamma) {
    for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - m) * (inv * gamma[k]);
  } else if (beta && !rms) {
    for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - m) * inv + beta[k];
  } else {
    for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - m) * inv;
  }
}

// The strided case of layer_normalization: x, y point at (o, 0, i0); `count` inner positions.
void layer_norm_chunk(const float* x, float* y, const float* gamma, const float* beta, int64_t n,
                      int64_t inner, int64_t count, float epsilon, bool rms) {
  double mean[kChunk], var[kChunk];
  float mf[kChunk], inv[kChunk];
  std::fill(mean, mean + count, 0.0);
  std::fill(var, var + count, 0.0);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < count; ++i) mean[i] += x[k * inner + i];
  for (int64_t i = 0; i < count; ++i) mean[i] /= double(n);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < count; ++i) {
      const double d = x[k * inner + i] - mean[i];
      var[i] += d * d;
    }
  for (int64_t i = 0; i < count; ++i) {
    inv[i] = static_cast<float>(1.0 / std::sqrt(var[i] / double(n) + epsilon));
    mf[i] = rms ? 0.f : static_cast<float>(mean[i]);
  }
  for (int64_t k = 0; k < n; ++k) {
    const float g = gamma ? gamma[k] : 1.f, b = (beta && !rms) ? beta[k] : 0.f;
    for (int64_t i = 0; i < count; ++i) y[k * inner + i] = (x[k * inner + i] - mf[i]) * (inv[i] * g) + b;
  }
}

}  // namespace

void batch_normalization(const float* x, float* y, const float* scale, const float* shift, int64_t outer,
                         int64_t channels, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    const float* xo = x + o * channels * inner;
    float* yo = y + o * channels * inner;
    if (inner == 1) {
      for (int64_t c = 0; c < channels; ++c) yo[c] = xo[c] * scale[c] + shift[c];
      continue;
    }
    for (int64_t c = 0; c < channels; ++c) {
      const float s = scale[c], t = shift[c];
      for (int64_t i = 0; i < inner; ++i) yo[c * inner + i] = xo[c * inner + i] * s + t;
    }
  }
}

void layer_normalization(const float* x, float* y, const float* gamma, const float* beta, int64_t outer,
                         int64_t n, int64_t inner, float epsilon, bool rms_scaling) {
  for (int64_t o = 0; o < outer; ++o) {
    const float* xo = x + o * n * inner;
    float* yo = y + o * n * inner;
    if (inner == 1) {
      const double mean = row_sum<1>(xo, n, 0.0) / double(n);
      const double var = row_sum<2>(xo, n, mean) / double(n);
      normalize_row(xo, yo, gamma, beta, n, static_cast<float>(mean),
                    static_cast<float>(1.0 / std::sqrt(var + epsilon)), rms_scaling);
      continue;
    }
    for (int64_t i0 = 0; i0 < inner; i0 += kChunk)
      layer_norm_chunk(xo + i0, yo + i0, gamma, beta, n, inner, std::min(kChunk, inner - i0), epsilon,
                       rms_scaling);
  }
}

void group_normalization(const float* x, float* y, const float* gamma, const float* beta, int64_t outer,
                         int64_t pre, int64_t groups, int64_t group_size, int64_t post, float epsilon) {
  const int64_t row = group_size * post;  // one group's contiguous run within one `pre` position
  const double count = double(pre * row);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g < groups; ++g) {
      auto start = [&](int64_t p) { return ((o * pre + p) * groups + g) * row; };
      double mean = 0.0, var = 0.0;
      for (int64_t p = 0; p < pre; ++p) mean += row_sum<1>(x + start(p), row, 0.0);
      mean /= count;
      for (int64_t p = 0; p < pre; ++p) var += row_sum<2>(x + start(p), row, mean);
      const float inv = static_cast<float>(1.0 / std::sqrt(var / count + epsilon)),
                  mf = static_cast<float>(mean);
      const float* gg = gamma ? gamma + g * group_size : nullptr;
      const float* bg = beta ? beta + g * group_size : nullptr;
      for (int64_t p = 0; p < pre; ++p) {
        const float* xr = x + start(p);
        float* yr = y + start(p);
        if (post == 1) {  // channels_last: the group's channels are the contiguous row
          normalize_row(xr, yr, gg, bg, group_size, mf, inv, false);
          continue;
        }
        for (int64_t j = 0; j < group_size; ++j) {
          const float a = inv * (gg ? gg[j] : 1.f), b = bg ? bg[j] : 0.f;
          for (int64_t q = 0; q < post; ++q) yr[j * post + q] = (xr[j * post + q] - mf) * a + b;
        }
      }
    }
}

}  // namespace kerascpp::kernels::KCPP_ISA
