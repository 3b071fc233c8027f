#include "layers/keras_arguments.h"

namespace kerascpp::layers {
namespace {

// Arguments every Keras layer takes besides its own (keras/src/layers/layer.py); input_shape and
// batch_input_shape stay in the config for Sequential to read and drop.
bool common_argument(const std::string& k) {
  for (const char* c : {"name", "trainable", "dtype", "autocast", "input_dim", "input_shape", "batch_input_shape",
                        "batch_size", "activity_regularizer"})
    if (k == c) return true;
  return false;
}

// A scalar given where Keras keeps a tuple: kernel_size=3 -> [3, 3], padding=(1, 2) -> [[1, 1], [2, 2]].
Json like(const Json& value, const Json& form) {
  if (!form.is_array() || form.empty()) return value;
  if (value.is_number()) {
    Json out = Json::array();
    for (const Json& f : form) out.push_back(like(value, f));
    return out;
  }
  if (value.is_array() && value.size() == form.size()) {
    Json out = Json::array();
    for (size_t i = 0; i < value.size(); ++i) out.push_back(like(value[i], form[i]));
    return out;
  }
  return value;
}

// Arguments whose default Keras takes from another: pooling strides are the pool_size, MultiHeadAttention's
// value_dim its key_dim. Others (Bidirectional's backward_layer) are left to the layer.
const char* derived_from(const std::string& key) {
  if (key == "strides") return "pool_size";
  if (key == "value_dim") return "key_dim";
  return nullptr;
}

std::string python_repr(const Json& given) {
  std::string out = "{";
  for (const auto& [k, v] : given.items()) out += (out.size() > 1 ? ", '" : "'") + k + "': " + v.dump();
  return out + "}";
}

}  // namespace

const Json& keras_arguments() {
  static const Json table = Json::parse(
#include "layers/keras_arguments.inc"
  );
  return table;
}

Json keras_object(const std::string& family, const Json& identifier) {
  const Json& table = keras_arguments()["objects"][family];
  const std::string what = family.substr(0, family.size() - 1);
  std::string cls;
  Json given = Json::object();
  if (identifier.is_string()) {
    cls = table["aliases"].value(identifier.get<std::string>(), identifier.get<std::string>());
  } else if (identifier.is_object() && identifier.contains("class_name")) {
    cls = identifier["class_name"].get<std::string>();
    given = identifier.value("config", Json::object());
  }
  KCPP_CHECK(!cls.empty() && table["classes"].contains(cls) && given.is_object(), ValueError, "Could not interpret ",
             what, " identifier: ", identifier.is_string() ? identifier.get<std::string>() : identifier.dump());
  Json config = table["classes"][cls]["defaults"];
  for (const auto& [k, v] : given.items()) config[k] = v;
  return {{"module", "keras." + family}, {"class_name", cls}, {"config", config}, {"registered_name", nullptr}};
}

Json layer_arguments(const std::string& class_name, const Json& given) {
  const Json& layers = keras_arguments()["layers"];
  if (!layers.contains(class_name) || !given.is_object()) return given;
  const Json& spec = layers[class_name];
  const Json& names = spec["arguments"];
  auto takes = [&](const std::string& k) { return std::find(names.begin(), names.end(), Json(k)) != names.end(); };
  Json unknown = Json::object();
  for (const auto& [k, v] : given.items())
    if (!takes(k) && !spec["defaults"].contains(k) && !common_argument(k)) unknown[k] = v;  // config keys too
  KCPP_CHECK(unknown.empty(), ValueError, "Unrecognized keyword arguments passed to ", class_name, ": ", python_repr(unknown));
  std::string missing;
  int count = 0;
  for (const Json& r : spec["required"])
    if (!given.contains(r.get<std::string>()) || given[r.get<std::string>()].is_null())
      missing += (count++ ? ", '" : "'") + r.get<std::string>() + "'";
  KCPP_CHECK(missing.empty(), TypeError, class_name, ".__init__() missing ", count, " required positional argument",
             count > 1 ? "s" : "", ": ", missing);
  Json config = spec["defaults"];
  for (const Json& d : spec["derived"]) config.erase(d.get<std::string>());
  const Json& forms = spec["forms"];
  for (const auto& [k, given_value] : given.items()) {
    Json v = given_value;
    if (v.is_null() && std::find(spec["derived"].begin(), spec["derived"].end(), Json(k)) != spec["derived"].end())
      continue;  // as if left out: derived below
    for (const char* family : {"initializer", "regularizer", "constraint"})
      if (k.ends_with(std::string("_") + family) && (v.is_string() || v.is_object()))
        v = keras_object(std::string(family) + "s", v);
    if ((k == "layer" || k == "backward_layer" || k == "cell") && v.is_object() && v.contains("class_name"))
      v["config"] = layer_arguments(v["class_name"].get<std::string>(), v.value("config", Json::object()));
    if ((k == "cells" || k == "cell") && v.is_array())  // a stack of cells
      for (Json& cell : v)
        if (cell.is_object() && cell.contains("class_name"))
          cell["config"] = layer_arguments(cell["class_name"].get<std::string>(), cell.value("config", Json::object()));
    if (k == "dtype" && v.is_string())
      v = {{"module", "keras"}, {"class_name", "DTypePolicy"}, {"config", {{"name", v}}}, {"registered_name", nullptr}};
    else if (k.ends_with("activation") && v.is_null())
      v = "linear";
    else if (config.contains(k) || forms.contains(k))
      v = like(v, config.contains(k) ? config[k] : forms[k]);
    config[k] = v;
  }
  for (const Json& d : spec["derived"]) {
    const std::string k = d.get<std::string>();
    const char* from = derived_from(k);
    if (!config.contains(k) && from && config.contains(from)) config[k] = config[from];
  }
  return config;
}

}  // namespace kerascpp::layers
