// keras.layers.BatchNormalization at inference: along `axis`,
//   y = (x - moving_mean) / sqrt(moving_variance + epsilon) * gamma + beta
// (keras/src/layers/normalization/batch_normalization.py; tf_keras's batch_normalization.py).
// momentum, synchronized and renorm_* only matter in training. Variables, in Keras's creation
// order: gamma (scale=True), beta (center=True), moving_mean, moving_variance, and with renorm=True
// moving_stddev, renorm_mean, renorm_stddev (kept for loading and saving; inference uses the moving
// mean and variance, as both Keras versions do).
//
// axis: an int (Keras 3, channels_first is axis=1) or, in tf_keras files, a list. One axis gives
// weights of shape (channels,); several axes give weights of the input's rank with 1 on the other
// dims, as tf_keras creates them. tf_keras's virtual_batch_size is refused: tf_keras saves it with
// an axis shifted by one, so that neither tf_keras nor Keras 3 can load such a file back.
#include <algorithm>
#include <numeric>

#include "layers/layer_list.h"
#include "layers/normalization/axes.h"
#include "ops/ops.h"
#include "ops/tape.h"

namespace kerascpp::layers {
namespace {

class BatchNormalization : public Layer {
 public:
  explicit BatchNormalization(const Json& config)
      : Layer(config),
        axis_(int_list(config, "axis", {-1})),
        epsilon_(get<float>(config, "epsilon", 1e-3f)),
        center_(get<bool>(config, "center", true)),
        scale_(get<bool>(config, "scale", true)),
        renorm_(get<bool>(config, "renorm", false)),
        momentum_(get<float>(config, "momentum", 0.99f)) {
    KCPP_CHECK(get<int64_t>(config, "virtual_batch_size", 0) == 0, NotImplementedError, "Layer '", name(),
               "' (BatchNormalization) uses `virtual_batch_size` (tf_keras ghost batch normalization), which "
               "kerascpp does not support. Received: virtual_batch_size=", config["virtual_batch_size"].dump());
    KCPP_CHECK(!axis_.empty(), ValueError, "Layer '", name(), "' (BatchNormalization): `axis` must not be empty. Received: axis=[]");
  }
  std::string class_name() const override { return "BatchNormalization"; }
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
    KCPP_CHECK(!batch_stats || !renorm_, NotImplementedError, "Layer '", name(),
               "' (BatchNormalization) cannot train with renorm=True");
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
      Shape kept(t.rank(), 1);
      kept[axis] = n;
      const Tensor mean = ops::reduce_mean(t, others);
      const Tensor centred = ops::binary(ops::BinaryOp::subtract, t, mean.reshape(kept));
      const Tensor variance = ops::reduce_mean(ops::unary(ops::UnaryOp::square, centred), others);
      if (ctx.updates) {
        ops::NoRecord pause;
        auto moved = [&](const VariablePtr& v, const Tensor& stat) {
          Tensor m = ops::binary(ops::BinaryOp::add, ops::scale_shift(flat(v), momentum_, 0.f),
                                 ops::scale_shift(stat, 1.f - momentum_, 0.f));
          ctx.updates->emplace_back(v, m.reshape(v->shape()));
        };
        moved(moving_mean_, mean);
        moved(moving_variance_, variance);
      }
      return ops::batch_normalization(t, mean, variance, flat(beta_), flat(gamma_), axis, epsilon_);
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
      add_weight("moving_stddev", param, false);
      add_weight("renorm_mean", param, false);
      add_weight("renorm_stddev", param, false);
    }
  }

 private:
  std::vector<int> axis_;  // as configured
  float epsilon_;
  bool center_, scale_, renorm_;
  float momentum_;
  std::vector<int> axes_;  // normalised, sorted, distinct (after build)
  size_t rank_ = 0;
  Shape built_shape_;
  VariablePtr gamma_, beta_, moving_mean_, moving_variance_;
};

}  // namespace
LayerPtr make_batch_normalization(const Json& c) { return std::make_shared<BatchNormalization>(c); }
}  // namespace kerascpp::layers
