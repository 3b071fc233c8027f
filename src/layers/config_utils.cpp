#include "layers/config_utils.h"

namespace kerascpp::layers {

std::vector<int> int_list(const Json& config, const char* key, std::vector<int> fallback) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  auto invalid = [&] {
    KCPP_THROW(ValueError, "Invalid value for `", key, "` in the config of layer '",
               config.value("name", std::string("?")), "'. Received: ", key, "=", it->dump());
  };
  // Each an int, or a float holding one (a list element), in int's range: converting a float past
  // it is undefined (found by fuzzing: attention_axes=[2.9e19]), and a wider integer would wrap.
  auto one = [&](const Json& v, bool in_list) {
    double d = 0;
    if (v.is_number_integer())
      d = v.is_number_unsigned() ? static_cast<double>(v.get<uint64_t>())
                                 : static_cast<double>(v.get<int64_t>());
    else if (in_list && v.is_number_float())
      d = v.get<double>();
    else
      invalid();
    if (!(d == std::floor(d) && d >= std::numeric_limits<int>::min() && d <= std::numeric_limits<int>::max()))
      invalid();
    return static_cast<int>(d);
  };
  if (!it->is_array()) return {one(*it, false)};
  std::vector<int> out;
  out.reserve(it->size());
  for (const Json& v : *it) out.push_back(one(v, true));
  return out;
}

std::pair<std::string, Json> keras_object(const Json& j) {
  if (j.is_string()) return {j.get<std::string>(), Json::object()};
  if (!j.is_object() || !j.contains("class_name") || !j["class_name"].is_string()) return {"", Json::object()};
  const Json c = j.contains("config") && j["config"].is_object() ? j["config"] : Json::object();
  return {j["class_name"].get<std::string>(), c};
}

Shape shape_from_json(const Json& j, const std::string& what) {
  KCPP_CHECK(j.is_array(), ValueError, "Expected a shape list for ", what, ". Received: ", j.dump());
  Shape s;
  for (const auto& d : j) {
    KCPP_CHECK(d.is_null() || d.is_number_integer(), ValueError, "Invalid dimension in ", what,
               ". Received: ", j.dump());
    s.push_back(d.is_null() ? -1 : d.get<int64_t>());
  }
  return s;
}

Json shape_to_json(const Shape& s) {
  Json j = Json::array();
  for (int64_t d : s) j.push_back(d < 0 ? Json(nullptr) : Json(d));
  return j;
}

}  // namespace kerascpp::layers
