// keras.layers.BatchNormalization at inference: along `axis`,
//   y = (x - moving_mean) / sqrt(moving_variance + epsilon) * gamma + beta
// (keras/src/layers/normalization/batch_normalization.py; tf_keras's batch_normalization.py).
// momentum, synchronized and renorm_* only matter in training. Variables, in Keras's creation
// order: gamma (scale=True), beta (center=True), moving_mean, moving_variance, and with renorm=True
// moving_stddev, renorm_mean, renorm_stddev (inference uses the moving mean and variance, as both
// Keras versions do). Training with tf_keras's renorm=True (batch renormalization, Ioffe 2017) as
// tf_keras's _renorm_correction_and_moments: the batch is normalised by its own moments, then scaled
// by r = stddev / renorm_stddev and shifted by d = (mean - renorm_mean) / renorm_stddev (clipped by
// renorm_clipping, no gradient); renorm_mean / renorm_stddev move with renorm_momentum, moving_mean and
// moving_stddev with momentum, and moving_variance = relu(moving_stddev^2 - epsilon).
//
// axis: an int (Keras 3, channels_first is axis=1) or, in tf_keras files, a list. One axis gives
// weights of shape (channels,); several axes give weights of the input's rank with 1 on the other
// dims, as tf_keras creates them. tf_keras's virtual_batch_size is refused: tf_keras saves it with
// an axis shifted by one, so that neither tf_keras nor Keras 3 can load such a file back.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "layers/layer_list.h"
#include "layers/plan_parts.h"
#include "layers/normalization/axes.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::layers {
namespace {

class BatchNormalization : public Layer {
 public:
  explicit BatchNormalization(Json given)
      : Layer(std::move(given)),
        axis_(int_list(config(), "axis", {-1})),
        epsilon_(get<float>(config(), "epsilon", 1e-3f)),
        center_(get<bool>(config(), "center", true)),
        scale_(get<bool>(config(), "scale", true)),
        renorm_(get<bool>(config(), "renorm", false)),
        momentum_(get<float>(config(), "momentum", 0.99f)),
        renorm_momentum_(get<float>(config(), "renorm_momentum", 0.99f)) {
    const Json clipping = config().value("renorm_clipping", Json());
    KCPP_CHECK(clipping.is_null() || clipping.is_object(), ValueError, "Layer '", name(), "' (BatchNormalization): "
               "`renorm_clipping` must be a dict of rmin, rmax and dmax. Received: renorm_clipping=", clipping.dump());
    const Json clip_keys = clipping.is_object() ? clipping : Json::object();
    for (const auto& [key, value] : clip_keys.items()) {
      KCPP_CHECK(key == "rmin" || key == "rmax" || key == "dmax", ValueError, "Layer '", name(), "' (BatchNormalization): "
                 "Received invalid keys for `renorm_clipping` argument: ", key, ". Supported values: ['rmax', 'rmin', 'dmax'].");
      KCPP_CHECK(value.is_null() || value.is_number(), ValueError, "Layer '", name(), "' (BatchNormalization): "
                 "renorm_clipping[\"", key, "\"] must be a number. Received: ", value.dump());
      if (value.is_number()) (key == "rmin" ? rmin_ : key == "rmax" ? rmax_ : dmax_) = value.get<float>();
    }
    KCPP_CHECK(get<int64_t>(config(), "virtual_batch_size", 0) == 0, NotImplementedError, "Layer '", name(),
               "' (BatchNormalization) uses `virtual_batch_size` (tf_keras ghost batch normalization), which "
               "kerascpp does not support. Received: virtual_batch_size=",
               config()["virtual_batch_size"].dump());
    KCPP_CHECK(!axis_.empty(), ValueError, "Layer '", name(), "' (BatchNormalization): `axis` must not be empty. Received: axis=[]");
  }
  std::string class_name() const override { return "BatchNormalization"; }
  bool parts(BatchNormParts* p) const {  // inference over one axis (call()'s first case)
    if (axes_.size() != 1) return false;
    *p = {gamma_, beta_, moving_mean_, moving_variance_, epsilon_, axes_[0]};
    return true;
  }
  bool supports_masking() const override { return true; }  // as Keras 3's

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    std::vector<int> axes = checked_axes(*this, config_, axis_, in[0]);
    if (!axes_.empty())
      for (int a : axes_)
        KCPP_CHECK(in[0].size() == rank_ && (in[0][a] < 0 || in[0][a] == built_shape_[a]), ValueError, "Input 0 of layer '",
                   name(), "' is incompatible with the layer: expected axis ", a, " of input shape to have value ",
                   built_shape_[a], ". Received: input_shape=", shape_str(in[0]));
    return in;
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override {
    const bool batch_stats = ctx.training && trainable();
    KCPP_CHECK(!batch_stats || !ctx.mask(0).defined(), NotImplementedError, "Layer '", name(),
               "' (BatchNormalization) cannot train on a masked input (Keras computes the batch statistics over "
               "the unmasked steps only)");
    const Tensor& x = in[0];
    const int64_t n = moving_mean_->value().size();
    auto flat = [n](const VariablePtr& v) { return v ? v->value().reshape({n}) : Tensor(); };
    auto bn = [&](const Tensor& t, int axis) {
      if (!batch_stats)
        return ops::batch_normalization(t, flat(moving_mean_), flat(moving_variance_), flat(beta_), flat(gamma_), axis,
                                        epsilon_);
      // Training: the batch's moments over every other axis (tf.nn.moments), and the moving
      // statistics moved towards them by (1 - momentum).
      std::vector<int> others;
      for (int d = 0; d < t.rank(); ++d)
        if (d != axis) others.push_back(d);
      const Tensor mean = ops::reduce_mean(t, others);
      const Tensor variance = ops::variance(t, mean, others);
      auto moved = [&](const VariablePtr& v, const Tensor& stat, float momentum) {
        return ops::binary(ops::BinaryOp::add, ops::scale_shift(flat(v), momentum, 0.f),
                           ops::scale_shift(stat, 1.f - momentum, 0.f));
      };
      if (!renorm_) {
        if (ctx.updates) {
          ops::NoRecord pause;
          ctx.updates->emplace_back(moving_mean_, moved(moving_mean_, mean, momentum_).reshape(moving_mean_->shape()));
          ctx.updates->emplace_back(moving_variance_, moved(moving_variance_, variance, momentum_).reshape(moving_variance_->shape()));
        }
        return ops::batch_normalization(t, mean, variance, flat(beta_), flat(gamma_), axis, epsilon_);
      }
      // Batch renormalization: r and d from the statistics before this batch's update, held constant.
      std::vector<float> r(static_cast<size_t>(n)), d(static_cast<size_t>(n)), stddev(static_cast<size_t>(n));
      {
        ops::NoRecord pause;
        const Tensor rm = flat(renorm_mean_), rs = flat(renorm_stddev_);
        const Tensor& bm = mean, &bv = variance;
        for (int64_t c = 0; c < n; ++c) {
          stddev[c] = std::sqrt(bv.data<float>()[c] + epsilon_);
          const float s = std::max(rs.data<float>()[c], std::sqrt(epsilon_));
          float rc = stddev[c] / s, dc = (bm.data<float>()[c] - rm.data<float>()[c]) / s;
          if (rmin_) rc = std::max(rc, *rmin_);
          if (rmax_) rc = std::min(rc, *rmax_);
          if (dmax_) dc = std::min(std::max(dc, -*dmax_), *dmax_);
          r[c] = rc, d[c] = dc;
        }
        if (ctx.updates) {
          const Tensor sd = Tensor::from_vector({n}, stddev);
          ctx.updates->emplace_back(renorm_mean_, moved(renorm_mean_, mean, renorm_momentum_).reshape(renorm_mean_->shape()));
          ctx.updates->emplace_back(renorm_stddev_, moved(renorm_stddev_, sd, renorm_momentum_).reshape(renorm_stddev_->shape()));
          ctx.updates->emplace_back(moving_mean_, moved(moving_mean_, mean, momentum_).reshape(moving_mean_->shape()));
          const Tensor new_stddev = moved(moving_stddev_, sd, momentum_);
          ctx.updates->emplace_back(moving_stddev_, new_stddev.reshape(moving_stddev_->shape()));
          const Tensor var = ops::unary(ops::UnaryOp::relu, ops::scale_shift(ops::unary(ops::UnaryOp::square, new_stddev), 1.f, -epsilon_));
          ctx.updates->emplace_back(moving_variance_, var.reshape(moving_variance_->shape()));
        }
      }
      // (x_hat * r + d) * gamma + beta: scale r * gamma, offset d * gamma + beta (_compose_transforms).
      const Tensor rt = Tensor::from_vector({n}, r), dt = Tensor::from_vector({n}, d);
      const Tensor gamma = flat(gamma_), beta = flat(beta_);
      const Tensor scale = gamma.defined() ? ops::binary(ops::BinaryOp::multiply, rt, gamma) : rt;
      Tensor offset = gamma.defined() ? ops::binary(ops::BinaryOp::multiply, dt, gamma) : dt;
      if (beta.defined()) offset = ops::binary(ops::BinaryOp::add, offset, beta);
      return ops::batch_normalization(t, mean, variance, offset, scale, axis, epsilon_);
    };
    if (axes_.size() == 1) return {bn(x, axes_[0])};
    if (adjacent(axes_)) {  // merge the block of axes into one: a view
      Shape merged(x.shape().begin(), x.shape().begin() + axes_.front());
      merged.push_back(n);
      merged.insert(merged.end(), x.shape().begin() + axes_.back() + 1, x.shape().end());
      return {bn(x.reshape(merged), axes_.front()).reshape(x.shape())};
    }
    // Move the axes to the end (in order, matching the weights' row-major layout) and back.
    std::vector<int> perm, inverse(x.rank());
    for (int d = 0; d < x.rank(); ++d)
      if (!std::binary_search(axes_.begin(), axes_.end(), d)) perm.push_back(d);
    perm.insert(perm.end(), axes_.begin(), axes_.end());
    for (int d = 0; d < x.rank(); ++d) inverse[perm[d]] = d;
    Tensor xt = ops::transpose(x, perm);
    Shape merged(xt.shape().begin(), xt.shape().end() - static_cast<long>(axes_.size()));
    merged.push_back(n);
    return {ops::transpose(bn(xt.reshape(merged), -1).reshape(xt.shape()), inverse)};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    expect_inputs(in, 1);
    axes_ = checked_axes(*this, config_, axis_, in[0]);
    std::sort(axes_.begin(), axes_.end());
    axes_.erase(std::unique(axes_.begin(), axes_.end()), axes_.end());
    require_known_dims(*this, config_, axes_, in[0]);
    rank_ = in[0].size();
    built_shape_ = in[0];
    Shape param;
    if (axes_.size() == 1) {
      param = {in[0][axes_[0]]};
    } else {  // tf_keras: the input's rank, 1 except on the axes
      param.assign(rank_, 1);
      for (int a : axes_) param[a] = in[0][a];
    }
    if (scale_) gamma_ = add_weight("gamma", param);
    if (center_) beta_ = add_weight("beta", param);
    moving_mean_ = add_weight("moving_mean", param, false);
    moving_variance_ = add_weight("moving_variance", param, false);
    if (renorm_) {
      moving_stddev_ = add_weight("moving_stddev", param, false);
      renorm_mean_ = add_weight("renorm_mean", param, false);
      renorm_stddev_ = add_weight("renorm_stddev", param, false);
    }
  }

 private:
  std::vector<int> axis_;  // as configured
  float epsilon_;
  bool center_, scale_, renorm_;
  float momentum_, renorm_momentum_;
  std::optional<float> rmin_, rmax_, dmax_;  // renorm_clipping
  std::vector<int> axes_;  // normalised, sorted, distinct (after build)
  size_t rank_ = 0;
  Shape built_shape_;
  VariablePtr gamma_, beta_, moving_mean_, moving_variance_;
  VariablePtr moving_stddev_, renorm_mean_, renorm_stddev_;  // renorm=True
};

}  // namespace
LayerPtr make_batch_normalization(Json c) { return std::make_shared<BatchNormalization>(std::move(c)); }
bool batch_norm_parts(const Layer& layer, BatchNormParts* parts) {
  const auto* bn = dynamic_cast<const BatchNormalization*>(&layer);
  return bn && bn->parts(parts);
}
}  // namespace kerascpp::layers
