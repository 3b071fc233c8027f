// keras.layers.GaussianDropout(rate): multiplies by N(1, sqrt(rate / (1 - rate))) noise in
// training; identity at inference (keras/src/layers/regularization/gaussian_dropout.py).
#include <cmath>

#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {
namespace {

class GaussianDropout : public InferenceIdentity {
 public:
  explicit GaussianDropout(Json given)
      : InferenceIdentity(std::move(given)), rate_(get<float>(config(), "rate", 0.f)) {}
  std::string class_name() const override { return "GaussianDropout"; }
  bool supports_masking() const override { return true; }  // as Keras 3's

 protected:
  Tensor train(const Tensor& x, std::mt19937_64& rng, const CallContext&) const override {
    if (rate_ <= 0.f || rate_ >= 1.f) return x;
    std::normal_distribution<float> n(1.f, std::sqrt(rate_ / (1.f - rate_)));
    return ops::binary(ops::BinaryOp::multiply, x, draw(x.shape(), [&] { return n(rng); }));
  }

 private:
  float rate_;
};

}  // namespace
LayerPtr make_gaussian_dropout(Json c) { return std::make_shared<GaussianDropout>(std::move(c)); }
}  // namespace kerascpp::layers
