// keras.layers.Dropout(rate, noise_shape=None): identity at inference; in training each element (or
// each slice along the dims where noise_shape is 1) is kept with probability 1 - rate and scaled
// by 1 / (1 - rate) (keras/src/layers/regularization/dropout.py).
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {
namespace {

class Dropout : public InferenceIdentity {
 public:
  explicit Dropout(Json given)
      : InferenceIdentity(std::move(given)), rate_(get<float>(config(), "rate", 0.f)) {
    KCPP_CHECK(rate_ >= 0.f && rate_ <= 1.f, ValueError, "Invalid value received for argument `rate` of layer '", name(),
               "' (Dropout). Expected a float value between 0 and 1. Received: rate=", rate_);
    if (config().contains("noise_shape") && !config()["noise_shape"].is_null())
      noise_ = shape_from_json(config()["noise_shape"], "noise_shape");
  }
  std::string class_name() const override { return "Dropout"; }
  bool supports_masking() const override { return true; }  // as Keras 3's

 protected:
  Tensor train(const Tensor& x, std::mt19937_64& rng, const CallContext&) const override {
    Shape noise = x.shape();
    if (!noise_.empty()) {
      KCPP_CHECK(noise_.size() == noise.size(), ValueError, "Layer '", name(), "' (Dropout): noise_shape ",
                 shape_str(noise_), " does not fit an input of shape ", shape_str(x.shape()));
      for (size_t d = 0; d < noise.size(); ++d)
        if (noise_[d] >= 0) noise[d] = noise_[d];
    }
    return dropout(x, rate_, noise, rng);
  }

 private:
  float rate_;
  Shape noise_;
};

}  // namespace
LayerPtr make_dropout(Json c) { return std::make_shared<Dropout>(std::move(c)); }
}  // namespace kerascpp::layers
