#include "io/python_json.h"

#include <array>
#include <string_view>

namespace kerascpp::io {
namespace {

constexpr std::array<std::string_view, 3> kTokens = {"-Infinity", "Infinity", "NaN"};

// Copies text, calling token(out, i) at each position outside strings; token returns how many
// characters it consumed (0: none, copy the character).
template <typename F>
std::string outside_strings(const std::string& text, F token) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c, ++i;
      continue;
    }
    const size_t used = token(out, i);
    if (used) {
      i += used;
    } else {
      out += c, ++i;
    }
  }
  return out;
}

}  // namespace

Json parse_python_json(const std::string& text) {
  if (text.find("Infinity") == std::string::npos && text.find("NaN") == std::string::npos) return Json::parse(text);
  return Json::parse(outside_strings(text, [&](std::string& out, size_t i) -> size_t {
    for (std::string_view t : kTokens)
      if (std::string_view(text).substr(i, t.size()) == t) {
        out += '"';
        out += t;
        out += '"';
        return t.size();
      }
    return 0;
  }));
}

std::string dump_python_json(const Json& j) {
  const std::string text = j.dump();
  if (text.find("Infinity\"") == std::string::npos && text.find("\"NaN\"") == std::string::npos) return text;
  // Outside strings, a string token is the whole of a quoted value: "Infinity" -> Infinity.
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_string && c == '"') {
      bool replaced = false;
      for (std::string_view t : kTokens)
        if (std::string_view(text).substr(i + 1, t.size() + 1) == std::string(t) + '"') {
          out += t;
          i += t.size() + 1;
          replaced = true;
          break;
        }
      if (replaced) continue;
      in_string = true;
      out += c;
      continue;
    }
    out += c;
    if (in_string && c == '\\' && i + 1 < text.size()) out += text[++i];
    else if (in_string && c == '"') in_string = false;
  }
  return out;
}

}  // namespace kerascpp::io
