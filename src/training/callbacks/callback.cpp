// Logs (Keras's logs dict) and the helpers every callback uses: keyword arguments, messages and
// warnings (keras/src/callbacks/callback.py, keras/src/utils/io_utils.py).
#include <algorithm>
#include <iostream>
#include <limits>

#include "kerascpp/error.h"
#include "kerascpp/warnings.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp {

// A dict keeps insertion order and replaces in place; logs hold a handful of keys, so a linear
// search costs less than a map.
void Logs::set(const std::string& key, double value) {
  arrays_.erase(key);
  for (auto& kv : items_)
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  items_.emplace_back(key, value);
}

void Logs::set_array(const std::string& key, std::vector<double> values) {
  double sum = 0;
  for (double v : values) sum += v;
  set(key, values.empty() ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(values.size()));
  arrays_[key] = std::move(values);
}

bool Logs::contains(const std::string& key) const {
  for (const auto& kv : items_)
    if (kv.first == key) return true;
  return false;
}

std::optional<double> Logs::get(const std::string& key) const {
  auto a = arrays_.find(key);
  KCPP_CHECK(a == arrays_.end(), ValueError, "The log \"", key, "\" is an array of ", a->second.size(),
             " values (a metric with several thresholds, or one value per class): only a number can be "
             "monitored or compared.");
  for (const auto& kv : items_)
    if (kv.first == key) return kv.second;
  return std::nullopt;
}

double Logs::at(const std::string& key) const {
  auto v = get(key);
  KCPP_CHECK(v.has_value(), ValueError, "Key \"", key, "\" is not in the logs. Available keys: [",
             callbacks::detail::join_keys(*this), "]");
  return *v;
}

const std::vector<double>* Logs::array(const std::string& key) const {
  auto a = arrays_.find(key);
  return a == arrays_.end() ? nullptr : &a->second;
}

void Logs::set_all(const Logs& other, const std::string& prefix) {
  for (const auto& [k, v] : other.items()) {
    if (const std::vector<double>* a = other.array(k)) {
      set_array(prefix + k, *a);
    } else {
      set(prefix + k, v);
    }
  }
}

void Logs::sort_keys() {
  std::stable_sort(items_.begin(), items_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

namespace callbacks::detail {

void check_kwargs(const std::string& callback, const Json& kwargs, std::initializer_list<const char*> allowed) {
  KCPP_CHECK(kwargs.is_object() || kwargs.is_null(), ValueError, callback,
             " expects its keyword arguments as a JSON object. Received: ", kwargs.dump());
  if (kwargs.is_null()) return;
  std::string unknown, known;
  for (const char* a : allowed) known += std::string(known.empty() ? "" : ", ") + a;
  for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || it.key() == a;
    if (!ok) unknown += (unknown.empty() ? "" : ", ") + it.key();
  }
  KCPP_CHECK(unknown.empty(), ValueError, "Unrecognized keyword arguments passed to ", callback, ": {", unknown,
             "}. Accepted arguments: {", known, "}");
}

namespace {
const Json* find(const Json& kwargs, const char* key) {
  if (!kwargs.is_object()) return nullptr;
  auto it = kwargs.find(key);
  return it == kwargs.end() ? nullptr : &*it;
}
[[noreturn]] void bad_type(const std::string& callback, const char* key, const char* want, const Json& v) {
  KCPP_THROW(ValueError, callback, ": `", key, "` must be ", want, ". Received: ", key, "=", v.dump());
}
}  // namespace

double num_arg(const std::string& callback, const Json& kwargs, const char* key, double fallback) {
  const Json* v = find(kwargs, key);
  if (!v) return fallback;
  if (!v->is_number()) bad_type(callback, key, "a number", *v);
  return v->get<double>();
}

std::optional<double> opt_num_arg(const std::string& callback, const Json& kwargs, const char* key) {
  const Json* v = find(kwargs, key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_number()) bad_type(callback, key, "a number or null", *v);
  return v->get<double>();
}

int int_arg(const std::string& callback, const Json& kwargs, const char* key, int fallback) {
  const Json* v = find(kwargs, key);
  if (!v) return fallback;
  // Python accepts bools as ints (verbose=True).
  if (v->is_boolean()) return v->get<bool>() ? 1 : 0;
  if (!v->is_number_integer()) bad_type(callback, key, "an integer", *v);
  return v->get<int>();
}

bool bool_arg(const std::string& callback, const Json& kwargs, const char* key, bool fallback) {
  const Json* v = find(kwargs, key);
  if (!v) return fallback;
  if (v->is_number_integer()) return v->get<int64_t>() != 0;
  if (!v->is_boolean()) bad_type(callback, key, "a boolean", *v);
  return v->get<bool>();
}

std::string str_arg(const std::string& callback, const Json& kwargs, const char* key, const std::string& fallback) {
  const Json* v = find(kwargs, key);
  if (!v) return fallback;
  if (!v->is_string()) bad_type(callback, key, "a string", *v);
  return v->get<std::string>();
}

std::ostream& msg_out() { return std::cout; }

void warn_once(bool& warned, const std::string& message) {
  if (warned) return;
  warned = true;
  kerascpp::warn(message);
}

std::string join_keys(const Logs& logs) {
  std::string s;
  for (const auto& kv : logs.items()) s += (s.empty() ? "" : ",") + kv.first;
  return s;
}

}  // namespace callbacks::detail
}  // namespace kerascpp
