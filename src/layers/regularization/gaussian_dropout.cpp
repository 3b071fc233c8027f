// keras.layers.GaussianDropout: identity at inference (see inference_identity.h).
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {
namespace {

class GaussianDropout : public InferenceIdentity {
 public:
  using InferenceIdentity::InferenceIdentity;
  std::string class_name() const override { return "GaussianDropout"; }
};

}  // namespace
LayerPtr make_gaussian_dropout(const Json& c) { return std::make_shared<GaussianDropout>(c); }
}  // namespace kerascpp::layers
