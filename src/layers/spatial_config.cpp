#include "layers/spatial_config.h"

#include <algorithm>
#include <cctype>

#include "layers/config_utils.h"

namespace kerascpp::layers {
namespace {

std::string key_value(const Json& config, const char* key) {
  auto it = config.find(key);
  return std::string(key) + "=" + (it == config.end() ? "None" : it->dump());
}

}  // namespace

std::string layer_who(const std::string& name, const std::string& cls) {
  return "layer '" + name + "' (" + cls + ")";
}

bool channels_first_from(const Json& config, const std::string& who) {
  auto it = config.find("data_format");
  if (it == config.end() || it->is_null()) return false;
  KCPP_CHECK(
      it->is_string() && (*it == "channels_last" || *it == "channels_first"), ValueError,
      "The `data_format` argument of ", who,
      " must be one of {'channels_first', 'channels_last'}. Received: ", key_value(config, "data_format"));
  return *it == "channels_first";
}

std::vector<int64_t> int_tuple(const Json& config, const char* key, int n, std::vector<int64_t> fallback,
                               int64_t min_value, const std::string& who) {
  auto it = config.find(key);
  std::vector<int64_t> v = std::move(fallback);
  if (it != config.end() && !it->is_null()) {
    bool ok = it->is_number_integer() || (it->is_array() && static_cast<int>(it->size()) == n);
    if (ok && it->is_number_integer()) {
      v.assign(n, it->get<int64_t>());
    } else if (ok) {
      v.clear();
      for (const Json& e : *it) {
        ok = ok && e.is_number_integer();
        if (ok) v.push_back(e.get<int64_t>());
      }
    }
    KCPP_CHECK(ok, ValueError, "The `", key, "` argument of ", who, " must be an int or a tuple of ", n,
               " integers. Received: ", key_value(config, key));
  }
  for (int64_t d : v)
    KCPP_CHECK(d >= min_value, ValueError, "The `", key, "` argument of ", who, " must be a tuple of ", n,
               " integers >= ", min_value, ". Received: ", key_value(config, key));
  return v;
}

std::vector<std::pair<int64_t, int64_t>> pair_list(const Json& config, const char* key, int n,
                                                   std::vector<std::pair<int64_t, int64_t>> fallback,
                                                   const std::string& who) {
  auto it = config.find(key);
  std::vector<std::pair<int64_t, int64_t>> v = std::move(fallback);
  if (it != config.end() && !it->is_null()) {
    const Json& j = *it;
    bool ok = true;
    v.clear();
    auto as_pair = [&](const Json& e) {
      if (e.is_number_integer()) return std::make_pair(e.get<int64_t>(), e.get<int64_t>());
      ok = ok && e.is_array() && e.size() == 2 && e[0].is_number_integer() && e[1].is_number_integer();
      return ok ? std::make_pair(e[0].get<int64_t>(), e[1].get<int64_t>())
                : std::make_pair(int64_t{0}, int64_t{0});
    };
    if (j.is_number_integer()) {
      v.assign(n, as_pair(j));
    } else if (n == 1 && j.is_array() && j.size() == 2) {
      v.push_back(as_pair(j));
    } else if (j.is_array() && static_cast<int>(j.size()) == n) {
      for (const Json& e : j) v.push_back(as_pair(e));
    } else {
      ok = false;
    }
    KCPP_CHECK(ok, ValueError, "The `", key, "` argument of ", who, " must be an int, a tuple of ", n,
               " ints or a tuple of ", n, " tuples of 2 ints. Received: ", key_value(config, key));
  }
  for (const auto& [a, b] : v)
    KCPP_CHECK(a >= 0 && b >= 0, ValueError, "`", key, "` cannot be negative in ", who,
               ". Received: ", key_value(config, key));
  return v;
}

ops::ResizeMethod resize_method_from(const Json& config, const char* key, const std::string& fallback,
                                     const std::string& who) {
  auto it = config.find(key);
  std::string m = fallback;
  if (it != config.end() && !it->is_null()) {
    KCPP_CHECK(it->is_string(), ValueError, "The `", key, "` argument of ", who,
               " must be a string. Received: ", key_value(config, key));
    m = it->get<std::string>();
  }
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (m == "nearest") return ops::ResizeMethod::nearest;
  if (m == "bilinear") return ops::ResizeMethod::bilinear;
  if (m == "bicubic") return ops::ResizeMethod::bicubic;
  KCPP_CHECK(m != "lanczos3" && m != "lanczos5" && m != "area" && m != "gaussian" && m != "mitchellcubic",
             NotImplementedError, "Interpolation '", m, "' of ", who,
             " is not implemented in kerascpp (supported: 'nearest', 'bilinear', 'bicubic'). Received: ",
             key_value(config, key));
  KCPP_THROW(
      ValueError, "Invalid value for argument `", key, "` of ", who,
      ". Expected one of ('bilinear', 'nearest', 'bicubic', 'lanczos3', 'lanczos5', 'area'). Received: ",
      key_value(config, key));
}

}  // namespace kerascpp::layers
