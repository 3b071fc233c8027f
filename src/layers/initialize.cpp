// Layer::initialize: the initial values of a layer's weights as Keras gives them (layers/initializers.h).
#include <map>

#include "kerascpp/layer.h"
#include "layers/initializers.h"

namespace kerascpp {
namespace {

// Per weight name: the config key of its initializer and Keras's default for it (keras/src/layers/*).
struct WeightInitializer {
  const char* key;
  const char* fallback;
};
const std::map<std::string, WeightInitializer>& weight_initializers() {
  static const std::map<std::string, WeightInitializer> m = {
      {"kernel", {"kernel_initializer", "glorot_uniform"}},
      {"depthwise_kernel", {"depthwise_initializer", "glorot_uniform"}},
      {"pointwise_kernel", {"pointwise_initializer", "glorot_uniform"}},
      {"recurrent_kernel", {"recurrent_initializer", "orthogonal"}},
      {"bias", {"bias_initializer", "zeros"}},
      {"embeddings", {"embeddings_initializer", "uniform"}},
      {"gamma", {"gamma_initializer", "ones"}},
      {"beta", {"beta_initializer", "zeros"}},
      {"moving_mean", {"moving_mean_initializer", "zeros"}},
      {"moving_variance", {"moving_variance_initializer", "ones"}},
      {"moving_stddev", {"", "ones"}},  // BatchNormalization(renorm=True)
      {"renorm_mean", {"", "zeros"}},
      {"renorm_stddev", {"", "ones"}},
      {"alpha", {"alpha_initializer", "zeros"}},  // PReLU
      {"scale", {"", "ones"}},                    // Attention(use_scale), RMSNormalization
      {"concat_score_weight", {"", "ones"}},
  };
  return m;
}

}  // namespace

Json Layer::initializer_for(const std::string& variable) const {
  const auto& table = weight_initializers();
  auto it = table.find(variable);
  if (it == table.end()) return Json();  // a statistic or state the layer sets itself
  const WeightInitializer& w = it->second;
  if (*w.key != '\0' && config_.contains(w.key) && !config_[w.key].is_null()) return config_[w.key];
  return Json(w.fallback);
}

void Layer::initialize(std::mt19937_64& rng) {
  for (const VariablePtr& v : variables_) {
    const Json init = initializer_for(v->name());
    if (init.is_null() || v->value().dtype() != DType::float32) continue;
    Tensor value = Tensor::empty(v->shape());
    layers::Initializer::from_config(init, "layer '" + name_ + "' (" + class_name() + ")").fill(value, rng);
    v->assign(value);
  }
}

}  // namespace kerascpp
