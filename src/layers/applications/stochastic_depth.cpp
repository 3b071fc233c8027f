// StochasticDepth of keras.applications.ConvNeXt* built with drop_path_rate > 0
// (keras/src/applications/convnext.py): in training each sample's residual path is kept with
// probability 1 - rate and scaled by 1 / (1 - rate); the identity at inference. Module
// "keras.src.applications.convnext" in saved configs.
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {
namespace {

class StochasticDepth : public InferenceIdentity {
 public:
  explicit StochasticDepth(Json given)
      : InferenceIdentity(std::move(given)), rate_(get<float>(config(), "drop_path_rate", 0.f)) {}
  std::string class_name() const override { return "StochasticDepth"; }

 protected:
  Tensor train(const Tensor& x, std::mt19937_64& rng, const CallContext&) const override {
    Shape noise(x.rank(), 1);
    noise[0] = x.dim(0);
    return dropout(x, rate_, noise, rng);
  }

 private:
  float rate_;
};

}  // namespace
LayerPtr make_stochastic_depth(Json c) { return std::make_shared<StochasticDepth>(std::move(c)); }
}  // namespace kerascpp::layers
