// keras.layers.Dropout: identity at inference (see inference_identity.h).
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {
namespace {

class Dropout : public InferenceIdentity {
 public:
  using InferenceIdentity::InferenceIdentity;
  std::string class_name() const override { return "Dropout"; }
};

}  // namespace
LayerPtr make_dropout(const Json& c) { return std::make_shared<Dropout>(c); }
}  // namespace kerascpp::layers
