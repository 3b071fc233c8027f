// keras.layers.GaussianNoise(stddev): adds N(0, stddev) noise in training; identity at inference.
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"

namespace kerascpp::layers {
namespace {

class GaussianNoise : public InferenceIdentity {
 public:
  explicit GaussianNoise(Json given)
      : InferenceIdentity(std::move(given)), stddev_(get<float>(config(), "stddev", 0.f)) {}
  std::string class_name() const override { return "GaussianNoise"; }
  bool supports_masking() const override { return true; }  // as Keras 3's

 protected:
  Tensor train(const Tensor& x, std::mt19937_64& rng, const CallContext&) const override {
    std::normal_distribution<float> n(0.f, stddev_);
    return ops::binary(ops::BinaryOp::add, x, draw(x.shape(), [&] { return n(rng); }));
  }

 private:
  float stddev_;
};

}  // namespace
LayerPtr make_gaussian_noise(Json c) { return std::make_shared<GaussianNoise>(std::move(c)); }
}  // namespace kerascpp::layers
