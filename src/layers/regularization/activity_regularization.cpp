// keras.layers.ActivityRegularization: identity at inference (see inference_identity.h).
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {
namespace {

class ActivityRegularization : public InferenceIdentity {
 public:
  using InferenceIdentity::InferenceIdentity;
  std::string class_name() const override { return "ActivityRegularization"; }
};

}  // namespace
LayerPtr make_activity_regularization(const Json& c) { return std::make_shared<ActivityRegularization>(c); }
}  // namespace kerascpp::layers
