// keras.layers.AlphaDropout(rate, noise_shape=None): in training, dropped units are set to SELU's
// saturation value and the result is affinely rescaled to keep mean and variance
// (keras/src/layers/regularization/alpha_dropout.py); identity at inference.
#include <cmath>

#include "kernels/kinds.h"
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {
namespace {

class AlphaDropout : public InferenceIdentity {
 public:
  explicit AlphaDropout(Json given)
      : InferenceIdentity(std::move(given)), rate_(get<float>(config(), "rate", 0.f)) {
    KCPP_CHECK(config().value("noise_shape", Json()).is_null(), NotImplementedError, "Layer '", name(),
               "' (AlphaDropout): noise_shape is not supported in training");
  }
  std::string class_name() const override { return "AlphaDropout"; }
  bool supports_masking() const override { return true; }  // as Keras 3's

 protected:
  Tensor train(const Tensor& x, std::mt19937_64& rng, const CallContext&) const override {
    if (rate_ <= 0.f || rate_ >= 1.f) return x;
    const double alpha_p = -kernels::kSeluAlpha * kernels::kSeluScale;
    const double a = std::pow((1.0 - rate_) * (1.0 + rate_ * alpha_p * alpha_p), -0.5);
    const double b = -a * alpha_p * rate_;
    std::uniform_real_distribution<float> u(0.f, 1.f);
    // a * (x * kept + alpha_p * (1 - kept)) + b = x * (a * kept) + (a * alpha_p * (1 - kept) + b)
    Tensor kept = draw(x.shape(), [&] { return u(rng) >= rate_ ? 1.f : 0.f; });
    Tensor scale = Tensor::empty(x.shape()), shift = Tensor::empty(x.shape());
    for (int64_t i = 0; i < x.size(); ++i) {
      const float k = kept.data<float>()[i];
      scale.data<float>()[i] = static_cast<float>(a * k);
      shift.data<float>()[i] = static_cast<float>(a * alpha_p * (1.0 - k) + b);
    }
    return ops::binary(ops::BinaryOp::add, ops::binary(ops::BinaryOp::multiply, x, scale), shift);
  }

 private:
  float rate_;
};

}  // namespace
LayerPtr make_alpha_dropout(Json c) { return std::make_shared<AlphaDropout>(std::move(c)); }
}  // namespace kerascpp::layers
