// Shared by the callback tests: the Keras 3 reference (tests/fixtures/training/callbacks.json,
// written by scripts/fixtures/callbacks_reference.py), logs from its JSON, a model to drive the
// callbacks with, and capture of what they print.
#pragma once

#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../test_paths.h"
#include "kerascpp/callbacks.h"
#include "kerascpp/model.h"

namespace kerascpp::testing {

using Json = nlohmann::json;

inline const Json& callbacks_reference() {
  static const Json ref = [] {
    std::ifstream f(fixture("training/callbacks.json"));
    return Json::parse(f);
  }();
  return ref;
}

// The reference writes inf / nan as strings (JSON has neither).
inline double num(const Json& j) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return s[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  return j.get<double>();
}

inline Logs logs_of(const Json& j) {
  Logs logs;
  for (auto it = j.begin(); it != j.end(); ++it) logs.set(it.key(), num(it.value()));
  return logs;
}

inline Model small_model() { return load_model(fixture("seed_mlp_2x10/keras3/model.keras")); }

// Sets every weight of `m` to `v` (to tell which epoch's weights a callback restored).
inline void fill_weights(Model& m, float v) {
  auto w = m.get_weights();
  for (auto& t : w)
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = v;
  m.set_weights(w);
}

// Captures std::cout (Keras's print_msg) or std::cerr (warnings) while alive.
class Capture {
 public:
  explicit Capture(std::ostream& s = std::cout) : s_(s), old_(s.rdbuf(buf_.rdbuf())) {}
  ~Capture() { s_.rdbuf(old_); }
  std::string text() const { return buf_.str(); }

 private:
  std::ostream& s_;
  std::ostringstream buf_;
  std::streambuf* old_;
};

}  // namespace kerascpp::testing
