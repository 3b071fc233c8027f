// The Loss base class (keras/src/losses/loss.py): name, reduction, weighting and reduction of
// the per-sample losses, get_config.
#include "kerascpp/losses.h"

#include "training/losses/loss_classes.h"
#include "training/losses/loss_utils.h"

namespace kerascpp::losses {
namespace {

// keras/src/losses/loss.py standardize_reduction, plus Keras 2's "auto" (= sum_over_batch_size).
// Returns the value get_config writes back.
Json parse_reduction(const Json& config, Reduction* out) {
  if (!config.is_object() || !config.contains("reduction")) {
    *out = Reduction::sum_over_batch_size;
    return "sum_over_batch_size";
  }
  const Json& r = config["reduction"];
  if (r.is_null()) {
    *out = Reduction::none;
    return nullptr;
  }
  const std::string s = r.is_string() ? r.get<std::string>() : r.dump();
  if (s == "sum_over_batch_size" || s == "auto") {
    *out = Reduction::sum_over_batch_size;
    return "sum_over_batch_size";
  }
  if (s == "sum") *out = Reduction::sum;
  else if (s == "none") *out = Reduction::none;
  else if (s == "mean") *out = Reduction::mean;
  else if (s == "mean_with_sample_weight") *out = Reduction::mean_with_sample_weight;
  else
    KCPP_THROW(ValueError, "Invalid value for argument `reduction`. Expected one of {'sum_over_batch_size', "
               "'sum', None, 'none', 'mean', 'mean_with_sample_weight'}. Received: reduction=", s);
  return s;
}

}  // namespace

Loss::Loss(const Json& config, const std::string& default_name) : name_(default_name) {
  KCPP_CHECK(config.is_null() || config.is_object(), ValueError, "A loss config must be a dict. Received: ",
             config.dump());
  if (config.is_object() && config.contains("name") && !config["name"].is_null()) {
    KCPP_CHECK(config["name"].is_string(), ValueError, "A loss name must be a string. Received: name=",
               config["name"].dump());
    name_ = config["name"].get<std::string>();
  }
  config_ = Json::object();
  config_["reduction"] = parse_reduction(config, &reduction_);
}

Tensor Loss::keras_mask(const Tensor&, const Tensor&) const { return Tensor(); }

// keras/src/losses/loss.py apply_mask: for a mean, the entries that count weigh total / valid, so the
// mean is over them; the mask multiplies the sample weights.
Tensor Loss::operator()(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) const {
  const Tensor values = call(y_true, y_pred);
  Tensor mask = keras_mask(y_true, y_pred);
  if (!mask.defined())
    return detail::reduce_weighted_values(class_name(), values, sample_weight, reduction_);
  mask = mask.copy();
  float* m = mask.data<float>();
  if (reduction_ == Reduction::mean || reduction_ == Reduction::sum_over_batch_size) {
    float valid = 0.f;
    for (int64_t i = 0; i < mask.size(); ++i) valid += m[i];
    const float scale = static_cast<float>(mask.size()) / (valid + 1e-7f);
    for (int64_t i = 0; i < mask.size(); ++i) m[i] *= scale;
  }
  Tensor sw = mask;
  if (sample_weight.defined()) {
    Tensor w = detail::as_float(sample_weight, class_name(), "sample_weight");
    if (w.rank() < mask.rank()) {  // (batch,) weights over (batch, ...) entries
      Shape s = w.shape();
      s.resize(static_cast<size_t>(mask.rank()), 1);
      w = w.reshape(s);
    }
    sw = detail::mul(mask, w);
  }
  return detail::reduce_weighted_values(class_name(), values, sw, reduction_);
}

// Keras 3's Loss.get_config: {"name", "reduction"} and the class's options (config_ holds the
// reduction as given and the options).
Json Loss::get_config() const {
  Json c = config_;
  c["name"] = name_;
  return c;
}

Json Loss::serialize() const {
  return Json{{"module", "keras.losses"}, {"class_name", class_name()}, {"config", get_config()},
              {"registered_name", nullptr}};
}

namespace detail {

void check_keys(const Json& config, const std::string& class_name, std::initializer_list<const char*> options) {
  if (!config.is_object()) return;
  for (const auto& [key, value] : config.items()) {
    if (key == "name" || key == "reduction" || key == "dtype" || key == "fn") continue;
    bool known = false;
    for (const char* o : options) known = known || key == o;
    KCPP_CHECK(known, ValueError, class_name, ": unexpected config key '", key, "'. Received: config=",
               config.dump());
  }
}

double number_option(const Json& config, const std::string& class_name, const char* key, double fallback) {
  if (!config.is_object() || !config.contains(key) || config[key].is_null()) return fallback;
  KCPP_CHECK(config[key].is_number(), ValueError, class_name, ": `", key, "` must be a number. Received: ", key,
             "=", config[key].dump());
  return config[key].get<double>();
}

bool bool_option(const Json& config, const std::string& class_name, const char* key, bool fallback) {
  if (!config.is_object() || !config.contains(key) || config[key].is_null()) return fallback;
  KCPP_CHECK(config[key].is_boolean(), ValueError, class_name, ": `", key, "` must be a boolean. Received: ", key,
             "=", config[key].dump());
  return config[key].get<bool>();
}

}  // namespace detail
}  // namespace kerascpp::losses
