// The Keras 2 / Keras 3 differences of layer configs, as data. Each rule was found by loading files of
// tf_keras 2.x and Keras 3.15 and reading their constructors; keras-format.md §3 lists the dialects.
#include "io/dialect_rules.h"

#include <string_view>
#include <vector>

namespace kerascpp::io {
namespace {

// A key and the value it holds when it changes nothing; kAny: dropped whatever it holds.
struct KeyValue {
  const char* key;
  Json same;
};
const Json kAny = Json::value_t::discarded;

struct DialectRule {
  const char* classes;  // a class name, "Prefix*" or "*Suffix"; "*" for every layer
  std::vector<std::pair<const char*, const char*>> renamed;  // {Keras 2 key, Keras 3 key}
  std::vector<KeyValue> keras2_only;  // Keras 2 writes them, Keras 3 refuses them
  std::vector<KeyValue> keras3_only;  // Keras 3 writes them, Keras 2 refuses them
};

const std::vector<DialectRule>& rules() {
  static const std::vector<DialectRule> r = {
      // Keras 3's quantization and LoRA (Dense, EinsumDense, Embedding).
      {"*", {}, {}, {{"quantization_config", kAny}, {"lora_rank", kAny}, {"lora_alpha", kAny}}},
      {"InputLayer", {{"batch_input_shape", "batch_shape"}}, {}, {}},
      {"LeakyReLU", {{"alpha", "negative_slope"}}, {}, {}},
      {"Embedding", {}, {{"input_length", kAny}}, {}},
      // tf_keras's RNN options Keras 3 lacks (time_major=True is refused by the layer when read from
      // a Keras 3 dialect config, where it cannot appear); Keras 3's use_cudnn only picks a kernel.
      {"SimpleRNN", {}, {{"time_major", false}, {"implementation", kAny}}, {{"use_cudnn", kAny}, {"seed", kAny}}},
      {"LSTM", {}, {{"time_major", false}, {"implementation", kAny}}, {{"use_cudnn", kAny}, {"seed", kAny}}},
      {"GRU", {}, {{"time_major", false}, {"implementation", kAny}}, {{"use_cudnn", kAny}, {"seed", kAny}}},
      {"RNN", {}, {{"time_major", false}}, {}},
      {"ConvLSTM*", {}, {{"time_major", false}}, {{"seed", kAny}}},
      // tf_keras's attention: the deprecated causal flag (use_causal_mask is a call argument in both),
      // MultiHeadAttention's recorded build shapes; Keras 3.15's gate, sliding window and seeds, and
      // flash_attention (a kernel choice: the same values).
      {"Attention", {}, {{"causal", false}}, {{"seed", kAny}}},
      {"AdditiveAttention", {}, {{"causal", false}}, {{"seed", kAny}}},
      {"MultiHeadAttention",
       {},
       {{"query_shape", kAny}, {"key_shape", kAny}, {"value_shape", kAny}, {"softmax_robust_masking", false}},
       {{"use_gate", false}, {"sliding_window", nullptr}, {"seed", kAny}, {"flash_attention", kAny}}},
      {"*Cell", {}, {{"implementation", kAny}}, {{"seed", kAny}}},
      // tf_keras's depthwise, separable and transposed convolutions inherit Conv's config: groups
      // (always 1) and, for separable ones, kernel_* keys for a kernel they do not have.
      {"DepthwiseConv*", {}, {{"groups", 1}}, {}},
      {"*Transpose", {}, {{"groups", 1}}, {}},
      {"SeparableConv*",
       {},
       {{"groups", 1}, {"kernel_initializer", kAny}, {"kernel_regularizer", kAny}, {"kernel_constraint", kAny}},
       {}},
      {"SpatialDropout*", {}, {{"noise_shape", kAny}, {"trainable", kAny}}, {}},
      {"LayerNormalization", {}, {}, {{"rms_scaling", false}}},
      {"Resizing",
       {},
       {},
       {{"data_format", "channels_last"}, {"antialias", false}, {"pad_to_aspect_ratio", false}, {"fill_mode", kAny},
        {"fill_value", kAny}}},
      // Image augmentation: tf_keras's stateful / stateless random generator choice; Keras 3's data
      // format (tf_keras's layers are channels_last) and RandomContrast's value_range.
      {"Random*", {}, {{"rng_type", kAny}}, {{"data_format", "channels_last"}}},
      {"RandomContrast", {}, {}, {{"value_range", Json::array({0, 255})}}},
      // Keras 3's Discretization takes no `trainable`; tf_keras's dtype is its output's (int64 for
      // indices), which Keras 3 would cast the inputs to.
      {"Discretization", {}, {{"trainable", kAny}, {"dtype", kAny}}, {}},
      // Keras 3's hashed OOV slots (tf_keras takes token floormod num_oov_indices only); Keras 3's dtype
      // is a float policy, tf_keras's the output's (int64 for indices, its default).
      {"IntegerLookup", {}, {}, {{"oov_method", "floormod"}, {"salt", nullptr}, {"dtype", kAny}}},
      {"CenterCrop",
       {},
       {},
       {{"data_format", "channels_last"}, {"antialias", false}, {"pad_to_aspect_ratio", false}, {"fill_mode", kAny},
        {"fill_value", kAny}}},
  };
  return r;
}

// Activations, {Keras 2 name, canonical name}. Read from Keras 2: the names that mean something else in
// Keras 3 (Keras 2's hard_sigmoid is 0.2 x + 0.5, Keras 3's relu6(x + 3) / 6).
constexpr std::pair<const char*, const char*> kKeras2Activations[] = {{"hard_sigmoid", "hard_sigmoid_k2"}};
// Written for Keras 2: the canonical names Keras 2 spells otherwise (it calls silu swish).
constexpr std::pair<const char*, const char*> kKeras2Spellings[] = {{"hard_sigmoid", "hard_sigmoid_k2"},
                                                                    {"swish", "silu"}};
// The config keys that name an activation (a recurrent layer has two).
constexpr const char* kActivationKeys[] = {"activation", "recurrent_activation"};
// Canonical activations Keras 2 has no name for.
constexpr const char* kKeras3OnlyActivations[] = {"hard_sigmoid", "hard_silu"};

bool matches(std::string_view pattern, std::string_view cls) {
  if (pattern == "*") return true;
  if (pattern.ends_with('*')) return cls.starts_with(pattern.substr(0, pattern.size() - 1));
  if (pattern.starts_with('*')) return cls.ends_with(pattern.substr(1));
  return pattern == cls;
}

[[noreturn]] void unrepresentable(const Json& c, const std::string& what, const char* dialect) {
  KCPP_THROW(NotImplementedError, "Layer '", c.value("name", std::string("?")), "' uses ", what,
             ", which Keras ", dialect, " cannot express; save in the other Keras dialect instead");
}

bool holds(const Json& c, const KeyValue& kv) { return kv.same.is_discarded() || c[kv.key] == kv.same; }

}  // namespace

void keras2_layer_keys_to_canonical(const std::string& cls, Json& c, int major) {
  for (const DialectRule& rule : rules()) {
    if (!matches(rule.classes, cls)) continue;
    for (const auto& [k2, k3] : rule.renamed) {
      if (!c.contains(k2)) continue;
      if (!c.contains(k3)) c[k3] = c[k2];
      c.erase(k2);
    }
    if (major != 2) continue;
    for (const KeyValue& kv : rule.keras2_only) {
      if (!c.contains(kv.key)) continue;
      KCPP_CHECK(holds(c, kv), NotImplementedError, "Layer '", c.value("name", std::string("?")), "' (", cls,
                 ") has ", kv.key, "=", c[kv.key].dump(), ", which Keras 3's ", cls, " does not take");
      c.erase(kv.key);
    }
  }
  for (const char* key : kActivationKeys)
    if (major == 2 && c.contains(key) && c[key].is_string())
      for (const auto& [k2, canonical] : kKeras2Activations)
        if (c[key] == k2) c[key] = canonical;
}

void canonical_layer_keys_to_keras2(const std::string& cls, Json& c) {
  for (const DialectRule& rule : rules()) {
    if (!matches(rule.classes, cls)) continue;
    for (const auto& [k2, k3] : rule.renamed) {
      if (!c.contains(k3)) continue;
      c[k2] = c[k3];
      c.erase(k3);
    }
    for (const KeyValue& kv : rule.keras3_only) {
      if (!c.contains(kv.key)) continue;
      if (!holds(c, kv)) unrepresentable(c, "Keras 3's " + cls + "(" + kv.key + "=" + c[kv.key].dump() + ")", "2");
      c.erase(kv.key);
    }
  }
  for (const char* key : kActivationKeys) {
    if (!c.contains(key) || !c[key].is_string()) continue;
    const std::string a = c[key].get<std::string>();
    for (const char* only3 : kKeras3OnlyActivations)
      if (a == only3) unrepresentable(c, "Keras 3's " + a, "2");
    for (const auto& [k2, canonical] : kKeras2Spellings)
      if (a == canonical) c[key] = k2;
  }
}

bool keras3_only_layer(const std::string& cls) {
  // Keras 3's image augmentation layers that tf_keras does not have, and AutoContrast.
  static const char* kOnly3[] = {"RandomGrayscale", "RandomHue", "RandomSaturation", "RandomSharpness", "RandomShear",
                                 "RandomColorJitter", "RandomColorDegeneration", "RandomPosterization", "RandomInvert",
                                 "RandomErasing", "RandomGaussianBlur", "RandomElasticTransform", "RandomPerspective",
                                 "Solarization", "Equalization", "AugMix", "RandAugment", "CutMix", "MixUp",
                                 "AutoContrast"};
  for (const char* c : kOnly3)
    if (cls == c) return true;
  return false;
}

void check_keras3_expressible(const std::string& cls, const Json& c) {
  for (const char* key : kActivationKeys)
    if (c.value(key, Json()) == "hard_sigmoid_k2") unrepresentable(c, "Keras 2's hard_sigmoid (0.2 x + 0.5)", "3");
}

}  // namespace kerascpp::io
