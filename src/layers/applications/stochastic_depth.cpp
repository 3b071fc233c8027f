// StochasticDepth of keras.applications.ConvNeXt* built with drop_path_rate > 0
// (keras/src/applications/convnext.py): drops whole residual paths in training, the identity at
// inference. Module "keras.src.applications.convnext" in saved configs.
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {
namespace {

class StochasticDepth : public InferenceIdentity {
 public:
  using InferenceIdentity::InferenceIdentity;
  std::string class_name() const override { return "StochasticDepth"; }
};

}  // namespace
LayerPtr make_stochastic_depth(const Json& c) { return std::make_shared<StochasticDepth>(c); }
}  // namespace kerascpp::layers
