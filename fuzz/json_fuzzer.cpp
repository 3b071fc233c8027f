// libFuzzer harness: kerascpp's JSON reader (io::parse_python_json, src/io/python_json_reader.cpp)
// against nlohmann's Json::parse on the same bytes. Both must refuse a text (with an error of the same
// id) or read it into the same value with the same number types; a text with Python's bare NaN /
// Infinity is the reader's own (Json::parse refuses those tokens) and only has to be read or refused
// cleanly. Anything else is a finding (the harness traps).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "io/python_json.h"

namespace {

using kerascpp::Json;

bool same(const Json& a, const Json& b) {
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(), jt = b.begin(); it != a.end(); ++it, ++jt)
      if (it.key() != jt.key() || !same(*it, *jt)) return false;
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i])) return false;
    return true;
  }
  if (a.is_number_float()) return a == b && std::signbit(a.get<double>()) == std::signbit(b.get<double>());  // -0.0
  return a == b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Json got;
  int got_error = 0;  // the Json::exception id, 0 when read
  try {
    got = kerascpp::io::parse_python_json(text, 64, "fuzz.json");
  } catch (const Json::exception& e) {
    got_error = e.id;
  } catch (const kerascpp::ValueError& e) {  // nested deeper than 64: the reader's own limit
    kerascpp::fuzz::refused(e);
    return 0;
  }
  if (text.find("NaN") != std::string::npos || text.find("Infinity") != std::string::npos) return 0;
  Json want;
  int want_error = 0;
  try {
    want = Json::parse(text);
  } catch (const Json::exception& e) {
    want_error = e.id;
  }
  if (got_error != want_error || (got_error == 0 && !same(got, want))) __builtin_trap();
  return 0;
}
