// Backward passes of the normalisation ops (see normalization.cpp), written with the ops themselves
// over x reshaped so that the statistics run over a set of kept axes.
#include <algorithm>
#include <cmath>

#include "kernels/parallel.h"
#include "ops/checks.h"
#include "ops/grad_util.h"
#include "ops/normalization_grad.h"
#include "ops/ops.h"

namespace kerascpp::ops::detail {

namespace {
// The dims of `shape` on `axes`, 1 elsewhere: how a per-position parameter broadcasts.
Shape kept_shape(const Shape& shape, const std::vector<int>& axes, bool on_axes) {
  Shape s(shape.size(), 1);
  for (size_t d = 0; d < shape.size(); ++d) {
    bool in = std::find(axes.begin(), axes.end(), static_cast<int>(d)) != axes.end();
    if (in == on_axes) s[d] = shape[d];
  }
  return s;
}
std::vector<int> other_axes(int rank, const std::vector<int>& axes) {
  std::vector<int> out;
  for (int d = 0; d < rank; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) out.push_back(d);
  return out;
}
}  // namespace

Grads normalize_over_axes_grad(const Tensor& x, const Tensor& gamma, const Tensor& beta, const std::vector<int>& axes,
                               float epsilon, bool rms, const Tensor& dy) {
  const Shape param_shape = kept_shape(x.shape(), axes, true);
  const std::vector<int> others = other_axes(x.rank(), axes);
  const Tensor mu = reduce_mean(x, axes, true);
  const Tensor xc = sub(x, mu);
  const Tensor var = reduce_mean(unary(UnaryOp::square, xc), axes, true);
  const Tensor inv = div(scalar(1.f), unary(UnaryOp::sqrt, scale_shift(var, 1.f, epsilon)));
  const Tensor g = gamma.defined() ? mul(dy, gamma.reshape(param_shape)) : dy;
  Tensor dx, xhat;
  if (rms) {
    xhat = mul(x, inv);
    Tensor inv3 = mul(inv, mul(inv, inv));
    dx = sub(mul(g, inv), mul(mul(inv3, reduce_mean(mul(g, x), axes, true)), xc));
  } else {
    xhat = mul(xc, inv);
    dx = mul(inv, sub(sub(g, reduce_mean(g, axes, true)), mul(xhat, reduce_mean(mul(g, xhat), axes, true))));
  }
  Tensor dgamma, dbeta;
  if (gamma.defined()) dgamma = sum_axes(mul(dy, xhat), others).reshape(gamma.shape());
  if (beta.defined()) dbeta = rms ? Tensor::zeros(beta.shape()) : sum_axes(dy, others).reshape(beta.shape());
  return {dx, dgamma, dbeta};
}

Grads group_normalization_grad(const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t groups, int axis,
                               float epsilon, const Tensor& dy) {
  // x as (batch, pre, groups, channels / groups, post): statistics over axes 1, 3 and 4.
  int64_t pre = 1, post = 1;
  for (int d = 1; d < axis; ++d) pre *= x.dim(d);
  for (int d = axis + 1; d < x.rank(); ++d) post *= x.dim(d);
  const Shape five = {x.dim(0), pre, groups, x.dim(axis) / groups, post};
  const Tensor g5 = gamma.defined() ? gamma.reshape({1, 1, groups, x.dim(axis) / groups, 1}) : Tensor();
  // gamma as a (groups, c / groups) block of the 5D view: its gradient is summed over axes 0, 1, 4.
  Grads g = normalize_over_axes_grad(x.reshape(five), Tensor(), Tensor(), {1, 3, 4}, epsilon, false,
                                     g5.defined() ? mul(dy.reshape(five), g5) : dy.reshape(five));
  Grads out = {g[0].reshape(x.shape()), Tensor(), Tensor()};
  if (gamma.defined() || beta.defined()) {
    const Tensor x5 = x.reshape(five), mu = reduce_mean(x5, {1, 3, 4}, true), xc = sub(x5, mu);
    const Tensor inv = div(scalar(1.f), unary(UnaryOp::sqrt, scale_shift(reduce_mean(unary(UnaryOp::square, xc), {1, 3, 4}, true), 1.f, epsilon)));
    if (gamma.defined()) out[1] = sum_axes(mul(dy.reshape(five), mul(xc, inv)), {0, 1, 4}).reshape(gamma.shape());
    if (beta.defined()) out[2] = sum_axes(dy.reshape(five), {0, 1, 4}).reshape(beta.shape());
  }
  return out;
}

Grads batch_normalization_grad(const Tensor& x, const Tensor& mean, const Tensor& variance, const Tensor& offset,
                               const Tensor& scale, int axis, float epsilon, const Tensor& dy) {
  const AxisSplit s = split_axis(x.shape(), axis);
  const int64_t c = s.axis;
  const float *px = x.data<float>(), *pm = mean.data<float>(), *pg = dy.data<float>();
  // The per-channel sums in double, by blocks of rows of a fixed size (each block's own sums, then the
  // blocks' in order): the same bits on any number of threads, the blocks split between them.
  const int64_t row = c * s.inner, block = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, row));
  const int64_t blocks = (s.outer + block - 1) / block;
  std::vector<double> partial(static_cast<size_t>(blocks * 2 * c), 0.0);
  kernels::parallel_chunks(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      double* sdy = partial.data() + b * 2 * c;
      double* sdyxc = sdy + c;
      for (int64_t o = b * block; o < std::min(s.outer, (b + 1) * block); ++o)
        for (int64_t k = 0; k < c; ++k)
          for (int64_t i = 0; i < s.inner; ++i) {
            const int64_t at = (o * c + k) * s.inner + i;
            sdy[k] += pg[at];
            sdyxc[k] += double(pg[at]) * (px[at] - pm[k]);
          }
    }
  }, 1);
  std::vector<double> sum_dy(c, 0.0), sum_dy_xc(c, 0.0);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t k = 0; k < c; ++k) {
      sum_dy[k] += partial[static_cast<size_t>(b * 2 * c + k)];
      sum_dy_xc[k] += partial[static_cast<size_t>(b * 2 * c + c + k)];
    }
  Tensor dx = Tensor::empty(x.shape()), dmean = Tensor::empty({c}), dvar = Tensor::empty({c});
  Tensor doffset = offset.defined() ? Tensor::empty({c}) : Tensor(), dscale = scale.defined() ? Tensor::empty({c}) : Tensor();
  std::vector<float> a(c);
  for (int64_t k = 0; k < c; ++k) {
    const double inv = 1.0 / std::sqrt(double(variance.data<float>()[k]) + epsilon);
    const double gk = scale.defined() ? scale.data<float>()[k] : 1.0;
    a[k] = static_cast<float>(inv * gk);
    dmean.data<float>()[k] = static_cast<float>(-sum_dy[k] * inv * gk);
    dvar.data<float>()[k] = static_cast<float>(-0.5 * sum_dy_xc[k] * gk * inv * inv * inv);
    if (offset.defined()) doffset.data<float>()[k] = static_cast<float>(sum_dy[k]);
    if (scale.defined()) dscale.data<float>()[k] = static_cast<float>(sum_dy_xc[k] * inv);
  }
  float* pdx = dx.data<float>();
  kernels::parallel_chunks(s.outer, std::max<int64_t>(1, kernels::kElementwiseGrain / std::max<int64_t>(1, row)),
                           [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t k = 0; k < c; ++k)
        for (int64_t i = 0; i < s.inner; ++i) {
          const int64_t at = (o * c + k) * s.inner + i;
          pdx[at] = pg[at] * a[k];
        }
  }, 1);
  return {dx, dmean, dvar, doffset, dscale};
}

}  // namespace kerascpp::ops::detail
