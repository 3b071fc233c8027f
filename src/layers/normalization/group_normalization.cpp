// keras.layers.GroupNormalization: the channels along `axis` split into `groups` consecutive groups;
// per sample and group, mean and variance over the group's channels and every other non-batch axis;
// y = (x - mean) / sqrt(variance + epsilon) * gamma + beta
// (keras/src/layers/normalization/group_normalization.py). groups=-1 means one group per channel
// (instance normalisation); Keras then records the resolved count, and so does get_config here.
// Variables: gamma (scale=True) then beta (center=True), each (channels,).
#include "layers/layer_list.h"
#include "layers/normalization/axes.h"
#include "ops/ops.h"

namespace kerascpp::layers {
namespace {

class GroupNormalization : public Layer {
 public:
  explicit GroupNormalization(Json given)
      : Layer(std::move(given)),
        groups_(get<int64_t>(config(), "groups", 32)),
        axis_(get<int>(config(), "axis", -1)),
        epsilon_(get<float>(config(), "epsilon", 1e-3f)),
        center_(get<bool>(config(), "center", true)),
        scale_(get<bool>(config(), "scale", true)) {
    KCPP_CHECK(groups_ > 0 || groups_ == -1, ValueError, "Layer '", name(),
               "' (GroupNormalization) received an invalid value for argument `groups`, expected a positive "
               "integer (or `-1` for instance normalization). Received: groups=", groups_);
  }
  std::string class_name() const override { return "GroupNormalization"; }
  bool supports_masking() const override { return true; }  // as Keras 3's

  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    checked_axes(*this, config_, {axis_}, in[0]);
    return in;
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext&) const override {
    return {ops::group_normalization(in[0], gamma_ ? gamma_->value() : Tensor(), beta_ ? beta_->value() : Tensor(),
                                     groups_, axis_, epsilon_)};
  }

 protected:
  void do_build(const std::vector<Shape>& in) override {
    expect_inputs(in, 1);
    const int a = checked_axes(*this, config_, {axis_}, in[0])[0];
    KCPP_CHECK(a != 0, ValueError, "Layer '", name(), "' (GroupNormalization): `axis` cannot be the batch axis. Received: axis=", axis_);
    require_known_dims(*this, config_, {a}, in[0]);
    const int64_t dim = in[0][a];
    if (groups_ == -1) {
      groups_ = dim;
      config_["groups"] = dim;
    }
    KCPP_CHECK(dim >= groups_, ValueError, "Layer '", name(), "' (GroupNormalization): the number of groups cannot be "
               "more than the number of channels (", dim, "). Received: groups=", groups_);
    KCPP_CHECK(dim % groups_ == 0, ValueError, "Layer '", name(), "' (GroupNormalization): the number of channels (",
               dim, ") must be a multiple of the number of groups. Received: groups=", groups_);
    if (scale_) gamma_ = add_weight("gamma", {dim});
    if (center_) beta_ = add_weight("beta", {dim});
  }

 private:
  int64_t groups_;
  int axis_;
  float epsilon_;
  bool center_, scale_;
  VariablePtr gamma_, beta_;
};

}  // namespace
LayerPtr make_group_normalization(Json c) { return std::make_shared<GroupNormalization>(std::move(c)); }
}  // namespace kerascpp::layers
