// get() over the one list of optimizer classes (optimizer_list.inc), and the config cleaning that turns
// Keras 2 / tf_keras / Keras 3 configs into one form.
#include <algorithm>
#include <cctype>

#include "core/naming.h"
#include "training/optimizers/optimizer_impl.h"

namespace kerascpp::optimizers {
namespace {

struct Entry {
  const char* class_name;
  const char* name;  // lowercase, as keras.optimizers.get takes it
  OptimizerPtr (*make)(const Json&);
  const char* arguments;
};

constexpr Entry kOptimizers[] = {
#define KCPP_OPTIMIZER(cls, id, args) {#cls, #id, detail::make_##id, args},
#include "training/optimizers/optimizer_list.inc"
#undef KCPP_OPTIMIZER
};
// Keras 3 optimizers that kerascpp does not implement: NotImplementedError rather than "unknown".
constexpr const char* kNotImplemented[] = {"muon", "lossscaleoptimizer", "multioptimizer", "schedulefreeadamw"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string known_list() {
  std::string s;
  for (const auto& e : kOptimizers) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

OptimizerPtr make(const std::string& class_name, const Json& config) {
  std::string key = lower(class_name);
  if (key.rfind("custom>", 0) == 0) key = key.substr(7);  // tf_keras .h5: "Custom>Adam"
  for (const auto& e : kOptimizers)
    if (key == e.name) return e.make(config);
  for (const char* n : kNotImplemented)
    KCPP_CHECK(key != n, NotImplementedError, "Optimizer '", class_name,
               "' is a Keras optimizer that kerascpp does not implement. Supported optimizers: ", known_list());
  KCPP_THROW(ValueError, "Could not interpret optimizer identifier: '", class_name,
             "'. Known optimizers: ", known_list());
}

}  // namespace

std::vector<std::string> known_optimizers() {
  std::vector<std::string> out;
  for (const auto& e : kOptimizers) out.emplace_back(e.name);
  return out;
}

std::vector<ClassInfo> optimizer_classes() {
  std::vector<ClassInfo> out;
  for (const auto& e : kOptimizers) out.push_back({e.class_name, split_words(e.arguments), {e.name}});
  return out;
}

OptimizerPtr get(const Json& identifier) {
  if (identifier.is_string()) return make(identifier.get<std::string>(), Json::object());
  KCPP_CHECK(identifier.is_object() && identifier.contains("class_name") && identifier["class_name"].is_string(),
             ValueError, "Could not interpret optimizer identifier: ", identifier.dump());
  const Json config = identifier.contains("config") && !identifier["config"].is_null() ? identifier["config"]
                                                                                         : Json::object();
  return make(identifier["class_name"].get<std::string>(), config);
}

namespace detail {

double number(const Json& config, const std::string& key) {
  const Json& v = config.contains(key) ? config[key] : Json();
  KCPP_CHECK(v.is_number(), ValueError, "Argument `", key, "` must be a number. Received: ", key, "=", v.dump());
  return v.get<double>();
}

Json pick(const Json& config, std::initializer_list<const char*> keys) {
  Json out = Json::object();
  for (const char* k : keys) out[k] = config.value(k, Json());
  return out;
}

Json prepare_config(const Json& config, const std::string& class_name, const Json& own) {
  KCPP_CHECK(config.is_object(), ValueError, class_name, " config must be a dict. Received: ", config.dump());
  Json c = config;
  // Keras 2 alias (keras 2.x optimizers took `lr`).
  if (c.contains("lr")) {
    KCPP_CHECK(!c.contains("learning_rate"), ValueError, class_name,
               " config has both `lr` and `learning_rate`. Received: ", config.dump());
    c["learning_rate"] = c["lr"];
    c.erase("lr");
  }
  // tf_keras keys that change nothing here.
  c.erase("jit_compile");
  c.erase("is_legacy_optimizer");
  // Keras 3 ignores `decay` with a warning; a non-zero legacy decay would silently train differently,
  // so it is refused (lr / (1 + decay * iterations) is not implemented).
  if (c.contains("decay")) {
    const Json& d = c["decay"];
    KCPP_CHECK(d.is_null() || (d.is_number() && d.get<double>() == 0.0), NotImplementedError, class_name,
               ": the legacy learning-rate `decay` is not supported (Keras 3 ignores it). Received: decay=",
               d.dump(), ". Use a learning-rate schedule instead.");
    c.erase("decay");
  }
  KCPP_CHECK(!c.contains("schedule_decay"), NotImplementedError, class_name,
             ": the Keras 2 Nadam `schedule_decay` is not supported. Received: schedule_decay=",
             c["schedule_decay"].dump());
  static const Json base = {{"name", nullptr},  // made once: immutable, shared by every thread
                            {"weight_decay", nullptr},
                            {"clipnorm", nullptr},
                            {"clipvalue", nullptr},
                            {"global_clipnorm", nullptr},
                            {"use_ema", false},
                            {"ema_momentum", 0.99},
                            {"ema_overwrite_frequency", nullptr},
                            {"loss_scale_factor", nullptr},
                            {"gradient_accumulation_steps", nullptr}};
  std::string unknown;
  for (const auto& [k, v] : c.items())
    if (!base.contains(k) && !own.contains(k)) unknown += (unknown.empty() ? "'" : ", '") + k + "': " + v.dump();
  KCPP_CHECK(unknown.empty(), ValueError, class_name, ": Argument(s) not recognized: {", unknown, "}");
  for (const Json* defaults : {&own, &base})  // the class's defaults win (AdamW's weight_decay)
    for (const auto& [k, v] : defaults->items())
      if (!c.contains(k)) c[k] = v;
  return c;
}

}  // namespace detail
}  // namespace kerascpp::optimizers
