// Layer::initialize: the initial values of a layer's weights as Keras gives them (layers/initializers.h).
#include <map>
#include <string_view>

#include "kerascpp/initializers.h"
#include "kerascpp/layer.h"
#include "layers/constraints.h"
#include "layers/initializers.h"

namespace kerascpp {
namespace {

// Keras's default initializer per weight name (keras/src/layers/*); the config's, under
// weight_config_key(weight, "initializer"), wins.
const std::map<std::string, const char*>& default_initializers() {
  static const std::map<std::string, const char*> m = {
      {"kernel", "glorot_uniform"}, {"depthwise_kernel", "glorot_uniform"}, {"pointwise_kernel", "glorot_uniform"},
      {"recurrent_kernel", "orthogonal"}, {"bias", "zeros"}, {"embeddings", "uniform"}, {"gamma", "ones"},
      {"beta", "zeros"}, {"moving_mean", "zeros"}, {"moving_variance", "ones"},
      {"moving_stddev", "ones"}, {"renorm_mean", "zeros"}, {"renorm_stddev", "ones"},  // BatchNormalization(renorm)
      {"alpha", "zeros"},                                                              // PReLU
      {"scale", "ones"}, {"concat_score_weight", "ones"},  // Attention(use_scale), RMSNormalization
      {"mean", "zeros"}, {"variance", "ones"},              // Normalization before adapt()
  };
  return m;
}

}  // namespace

std::string Layer::weight_config_key(const std::string& weight, const std::string& what) const {
  const std::string_view w = weight;
  if (w.ends_with("_kernel"))  // recurrent_kernel -> recurrent_<what>, as depthwise_ and pointwise_
    for (std::string_view k : {"recurrent", "depthwise", "pointwise"})
      if (w.size() == k.size() + 7 && w.starts_with(k)) return std::string(k) + "_" + what;
  return weight + "_" + what;
}

Json Layer::initializer_for(const std::string& variable) const {
  const auto& table = default_initializers();
  auto it = table.find(variable);
  if (it == table.end()) return Json();  // a counter (Normalization's count)
  const std::string key = weight_config_key(variable, "initializer");
  if (config_.contains(key) && !config_[key].is_null()) return config_[key];
  return Json(it->second);
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

namespace layers {
void initialize_weights(Layer& layer, std::mt19937_64& rng) {
  layer.initialize(rng);
  for (Layer* sub : layer.sublayers()) initialize_weights(*sub, rng);
}
}  // namespace layers

Tensor initializers::initial_value(const Json& initializer, const Shape& shape, std::optional<uint64_t> seed) {
  Tensor value = Tensor::empty(shape);
  std::mt19937_64 rng(seed ? *seed : std::random_device{}());
  layers::Initializer::from_config(initializer, "initializer " + initializer.dump()).fill(value, rng);
  return value;
}

Tensor constraints::apply(const Json& constraint, const Tensor& weight) {
  const layers::Constraint c = layers::Constraint::from_config(constraint, "constraint " + constraint.dump());
  const Tensor w = weight.dtype() == DType::float32 ? weight : weight.astype(DType::float32);
  return c.active() ? c.apply(w) : w;
}

}  // namespace kerascpp
