// keras.layers.ActivityRegularization(l1, l2): identity, which adds
// (l1 * sum|x| + l2 * sum(x^2)) / batch_size to the loss of train and test steps (keras/src/layers/layer.py normalises
// activity losses by the batch size).
#include "layers/layer_list.h"
#include "layers/regularization/inference_identity.h"
#include "layers/regularizers.h"

namespace kerascpp::layers {
namespace {

class ActivityRegularization : public InferenceIdentity {
 public:
  explicit ActivityRegularization(Json given)
      : InferenceIdentity(std::move(given)),
        l1_(get<float>(config(), "l1", 0.f)),
        l2_(get<float>(config(), "l2", 0.f)) {}
  std::string class_name() const override { return "ActivityRegularization"; }
  bool supports_masking() const override { return true; }  // as Keras 3's
  // As every Keras activity regulariser, in training and evaluation alike (whenever the step
  // collects losses).
  std::vector<Tensor> call(const std::vector<Tensor>& in, const CallContext& ctx) const override {
    if (ctx.losses) ctx.losses->push_back(activity_loss(l1_, l2_, in[0]));
    return in;
  }

 protected:
  Tensor train(const Tensor& x, std::mt19937_64&, const CallContext&) const override { return x; }

 private:
  float l1_, l2_;
};

}  // namespace
LayerPtr make_activity_regularization(Json c) {
  return std::make_shared<ActivityRegularization>(std::move(c));
}
}  // namespace kerascpp::layers
