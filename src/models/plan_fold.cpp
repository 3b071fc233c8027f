#include "models/plan_fold.h"

#include "kernels/normalization.h"

namespace kerascpp::models {

uint64_t folded_version(const VariablePtr& kernel, const VariablePtr& bias,
                        const std::optional<layers::BatchNormParts>& bn) {
  uint64_t v = kernel->version() + (bias ? bias->version() : 0);
  if (bn)
    for (const VariablePtr& w : {bn->gamma, bn->beta, bn->mean, bn->variance})
      if (w) v += w->version();
  return v;
}

std::shared_ptr<const FoldedWeights> fold_weights(const VariablePtr& kernel, const VariablePtr& bias,
                                                  const std::optional<layers::BatchNormParts>& bn, float out_scale,
                                                  int64_t channels) {
  auto f = std::make_shared<FoldedWeights>();
  f->version = folded_version(kernel, bias, bn);
  auto data = [](const VariablePtr& v) { return v ? v->data<float>() : nullptr; };
  std::vector<float> scale(channels, 1.f), shift(channels, 0.f);
  if (bn)
    kernels::batch_normalization_fold(data(bn->mean), data(bn->variance), data(bn->gamma), data(bn->beta), bn->epsilon,
                                      channels, scale.data(), shift.data());
  for (int64_t c = 0; c < channels; ++c) scale[c] *= out_scale, shift[c] *= out_scale;
  f->kernel.resize(kernel->value().size());
  f->bias.resize(channels);
  kernels::fold_into_weights(data(kernel), data(bias), scale.data(), shift.data(), static_cast<int64_t>(f->kernel.size()),
                             channels, f->kernel.data(), f->bias.data());
  return f;
}

}  // namespace kerascpp::models
