#include "layers/config_utils.h"

namespace kerascpp::layers {

std::vector<int> int_list(const Json& config, const char* key, std::vector<int> fallback) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (it->is_number_integer()) return {it->get<int>()};
  return get<std::vector<int>>(config, key, fallback);
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
