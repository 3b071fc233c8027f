// keras.layers.AlphaDropout: identity at inference (see inference_identity.h).
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {
namespace {

class AlphaDropout : public InferenceIdentity {
 public:
  using InferenceIdentity::InferenceIdentity;
  std::string class_name() const override { return "AlphaDropout"; }
};

}  // namespace
LayerPtr make_alpha_dropout(const Json& c) { return std::make_shared<AlphaDropout>(c); }
}  // namespace kerascpp::layers
