// keras.layers.SpatialDropout1D / 2D / 3D (one Keras file, spatial_dropout.py): drops whole feature
// maps in training (the mask is shared over the spatial dims), the identity at inference.
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"
#include "layers/spatial_config.h"

namespace kerascpp::layers {
namespace {

template <int N>
class SpatialDropout : public InferenceIdentity {
 public:
  explicit SpatialDropout(Json given)
      : InferenceIdentity(std::move(given)),
        rate_(get<float>(config(), "rate", 0.f)),
        channels_first_(
            N > 1 && channels_first_from(config(), layer_who(config().value("name", std::string()),
                                                             "SpatialDropout" + std::to_string(N) + "D"))) {}
  std::string class_name() const override { return "SpatialDropout" + std::to_string(N) + "D"; }
  bool supports_masking() const override { return true; }  // as Keras 3's
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    KCPP_CHECK(static_cast<int>(in[0].size()) == N + 2, ValueError, "Layer '", name(), "' (", class_name(),
               ") expects an input of rank ", N + 2, ". Received: shape=", shape_str(in[0]));
    return in;
  }

 protected:
  Tensor train(const Tensor& x, std::mt19937_64& rng, const CallContext&) const override {
    Shape noise(x.rank(), 1);
    noise[0] = x.dim(0);
    noise[channels_first_ ? 1 : x.rank() - 1] = x.dim(channels_first_ ? 1 : -1);
    return dropout(x, rate_, noise, rng);
  }

 private:
  float rate_;
  bool channels_first_;
};

}  // namespace
LayerPtr make_spatial_dropout1d(Json c) { return std::make_shared<SpatialDropout<1>>(std::move(c)); }
LayerPtr make_spatial_dropout2d(Json c) { return std::make_shared<SpatialDropout<2>>(std::move(c)); }
LayerPtr make_spatial_dropout3d(Json c) { return std::make_shared<SpatialDropout<3>>(std::move(c)); }
}  // namespace kerascpp::layers
