// keras.layers.SpatialDropout1D / 2D / 3D (one Keras file, spatial_dropout.py): identity at inference.
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {
namespace {

template <int N>
class SpatialDropout : public InferenceIdentity {
 public:
  using InferenceIdentity::InferenceIdentity;
  std::string class_name() const override { return "SpatialDropout" + std::to_string(N) + "D"; }
  std::vector<Shape> compute_output_shape(const std::vector<Shape>& in) const override {
    expect_inputs(in, 1);
    KCPP_CHECK(static_cast<int>(in[0].size()) == N + 2, ValueError, "Layer '", name(), "' (", class_name(),
               ") expects an input of rank ", N + 2, ". Received: shape=", shape_str(in[0]));
    return in;
  }
};

}  // namespace
LayerPtr make_spatial_dropout1d(const Json& c) { return std::make_shared<SpatialDropout<1>>(c); }
LayerPtr make_spatial_dropout2d(const Json& c) { return std::make_shared<SpatialDropout<2>>(c); }
LayerPtr make_spatial_dropout3d(const Json& c) { return std::make_shared<SpatialDropout<3>>(c); }
}  // namespace kerascpp::layers
