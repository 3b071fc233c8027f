// Keras 3's augmentation policies, which compose the other augmentation layers (built as Keras builds
// them, from the policy's factor, value_range, interpolation, seed and data_format):
// - RandAugment(value_range, num_ops=2, factor=0.5): num_ops layers drawn at random (one draw for the
//   batch) among shear, translation, rotation, brightness, color degeneration, contrast, sharpness,
//   posterization, solarization, AutoContrast and Equalization, applied in turn; a layer drawn twice
//   repeats its transform.
// - AugMix(value_range, num_chains=3, chain_depth=3, factor=0.3, alpha=1.0, all_ops=True): num_chains
//   chains of up to chain_depth layers (each step one of the layers or none, uniformly; each with fresh
//   draws), mixed by Dirichlet(alpha) weights, then w x + (1 - w) mix with w ~ Beta(alpha, alpha), clipped
//   to value_range. all_ops=False leaves out brightness, color degeneration, contrast and sharpness.
// A factor f in [0, 1] is (0, f); a pair is sorted. Each sub-layer runs through its own call with a
// step seed drawn from the policy's random stream.
#include <algorithm>
#include <cmath>

#include "layers/layer_list.h"
#include "layers/preprocessing/image_augmentation/augmentation_helpers.h"
#include "layers/preprocessing/image_augmentation/image_augmentation.h"

namespace kerascpp::layers {
namespace {

class AugmentationPolicy : public ImageAugmentation {
 public:
  AugmentationPolicy(Json given, const char* cls, float default_factor)
      : ImageAugmentation(std::move(given), cls) {
    const auto [lo, hi] =
        aug::unit_factor(config(), "factor", default_factor, "Layer '" + name() + "' (" + cls + ")");
    factor_ = Json::array({static_cast<double>(lo), static_cast<double>(hi)});
    range_ = value_range();
  }

 protected:
  // The sub-layers, in Keras's order (keras/src/layers/preprocessing/image_preprocessing/aug_mix.py).
  void make_layers(bool all_ops) {
    const Json& c = config_;
    Json format = c.value("data_format", Json());
    Json common = {{"seed", c.value("seed", Json())}, {"data_format", format.is_string() ? format : "channels_last"}};
    Json geometric = common;
    geometric["interpolation"] = c.value("interpolation", Json("bilinear"));
    Json color = common;
    color["value_range"] = Json::array({range_.first, range_.second});
    auto add = [&](const char* cls, const char* key, Json config) {
      config["name"] = name() + "_" + key;
      layers_.emplace_back(key, make_layer(cls, config));
    };
    auto with = [](Json base, const Json& more) { return base.update(more), base; };
    add("RandomShear", "random_shear", with(geometric, {{"x_factor", factor_}, {"y_factor", factor_}}));
    add("RandomTranslation", "random_translation",
        with(geometric, {{"height_factor", factor_}, {"width_factor", factor_}}));
    add("RandomRotation", "random_rotation", with(geometric, {{"factor", factor_}}));
    const int bits = std::max(1, static_cast<int>(8 * factor_[1].get<float>()));
    add("RandomPosterization", "random_posterization", with(color, {{"factor", bits}}));
    add("Solarization", "solarization", with(color, {{"addition_factor", factor_}, {"threshold_factor", factor_}}));
    add("AutoContrast", "auto_contrast", with(color, {{"seed", nullptr}}));
    add("Equalization", "equalization", with(color, {{"seed", nullptr}}));
    if (!all_ops) return;
    add("RandomBrightness", "random_brightness", with(color, {{"factor", factor_}}));
    add("RandomColorDegeneration", "random_color_degeneration", with(color, {{"factor", factor_}}));
    add("RandomContrast", "random_contrast", with(color, {{"factor", factor_}}));
    add("RandomSharpness", "random_sharpness", with(color, {{"factor", factor_}}));
  }
  // Sub-layer i in training on x, its draws from `seed`.
  Tensor apply(size_t i, const Tensor& x, uint64_t seed) const {
    CallContext ctx;
    ctx.training = true;
    ctx.seed = seed;
    return layers_[i].second->call({x}, ctx)[0];
  }

  Json factor_;
  std::pair<float, float> range_;
  std::vector<std::pair<std::string, LayerPtr>> layers_;
};

class RandAugment : public AugmentationPolicy {
 public:
  explicit RandAugment(Json given)
      : AugmentationPolicy(std::move(given), "RandAugment", 0.5f),
        num_ops_(get<int64_t>(config(), "num_ops", 2)) {
    KCPP_CHECK(num_ops_ >= 0, ValueError, "Layer '", name(), "' (RandAugment): `num_ops` must be >= 0. Received: ",
               num_ops_);
    make_layers(true);
    // Keras's order here: the colour layers before posterization (rand_augment.py _AUGMENT_LAYERS).
    std::vector<std::pair<std::string, LayerPtr>> ordered;
    for (const char* key : {"random_shear", "random_translation", "random_rotation", "random_brightness",
                            "random_color_degeneration", "random_contrast", "random_sharpness", "random_posterization",
                            "solarization", "auto_contrast", "equalization"})
      for (const auto& l : layers_)
        if (l.first == key) ordered.push_back(l);
    layers_ = std::move(ordered);
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    std::uniform_int_distribution<size_t> pick(0, layers_.size() - 1);
    std::vector<size_t> chosen(static_cast<size_t>(num_ops_));
    for (size_t& i : chosen) i = pick(rng);
    std::vector<uint64_t> seeds(layers_.size());  // one transform per layer, repeated if drawn twice
    for (uint64_t& s : seeds) s = rng();
    for (size_t i : chosen) x = apply(i, x, seeds[i]);
    return x;
  }

 private:
  int64_t num_ops_;
};

class AugMix : public AugmentationPolicy {
 public:
  explicit AugMix(const Json& c)
      : AugmentationPolicy(c, "AugMix", 0.3f), chains_(get<int64_t>(c, "num_chains", 3)),
        depth_(get<int64_t>(c, "chain_depth", 3)), alpha_(get<float>(c, "alpha", 1.f)) {
    KCPP_CHECK(chains_ >= 1 && depth_ >= 0, ValueError, "Layer '", name(),
               "' (AugMix): num_chains must be >= 1 and chain_depth >= 0. Received: num_chains=", chains_,
               ", chain_depth=", depth_);
    make_layers(get<bool>(c, "all_ops", true));
  }

 protected:
  Tensor augment(Tensor x, std::mt19937_64& rng) const override {
    KCPP_CHECK(alpha_ > 0.f, NotImplementedError, "Layer '", name(), "' (AugMix) with alpha=", alpha_,
               " has no Dirichlet / Beta distribution to draw its mixing weights from");
    std::vector<float> weights(static_cast<size_t>(chains_));
    float total = 0.f;
    for (float& w : weights) total += (w = aug::keras_gamma(rng, alpha_));  // Dirichlet(alpha), normalised
    const float w = aug::keras_beta(rng, alpha_);
    std::uniform_int_distribution<size_t> pick(0, layers_.size());  // layers_.size(): none
    Tensor mixed = Tensor::zeros(x.shape());
    for (int64_t k = 0; k < chains_; ++k) {
      Tensor chain = x;
      for (int64_t d = 0; d < depth_; ++d) {
        const size_t i = pick(rng);
        const uint64_t seed = rng();
        if (i < layers_.size()) chain = apply(i, chain, seed);
      }
      const float m = weights[static_cast<size_t>(k)] / total;
      for (int64_t j = 0; j < x.size(); ++j) mixed.data<float>()[j] += chain.data<float>()[j] * m;
    }
    for (int64_t j = 0; j < x.size(); ++j) {
      const float v = w * x.data<float>()[j] + (1.f - w) * mixed.data<float>()[j];
      x.data<float>()[j] = std::clamp(v, range_.first, range_.second);
    }
    return x;
  }

 private:
  int64_t chains_, depth_;
  float alpha_;
};

}  // namespace
LayerPtr make_rand_augment(Json c) { return std::make_shared<RandAugment>(std::move(c)); }
LayerPtr make_aug_mix(Json c) { return std::make_shared<AugMix>(std::move(c)); }
}  // namespace kerascpp::layers
