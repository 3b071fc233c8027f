// keras.layers.GaussianNoise: identity at inference (see inference_identity.h).
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {
namespace {

class GaussianNoise : public InferenceIdentity {
 public:
  using InferenceIdentity::InferenceIdentity;
  std::string class_name() const override { return "GaussianNoise"; }
};

}  // namespace
LayerPtr make_gaussian_noise(const Json& c) { return std::make_shared<GaussianNoise>(c); }
}  // namespace kerascpp::layers
