#include "io/python_json.h"

#include <array>
#include <cmath>
#include <string_view>

namespace kerascpp::io {
namespace {

// Python's tokens, and the strings that stand for them in a JSON value on its way to text: a character
// no JSON text holds unescaped (U+0001) makes them unlike any string of a config.
struct Token {
  std::string_view bare, stand_in;
};
const std::array<Token, 3>& tokens() {
  static const std::array<Token, 3> t = {Token{"-Infinity", "\x01kerascpp:-Infinity"},
                                         Token{"Infinity", "\x01kerascpp:Infinity"},
                                         Token{"NaN", "\x01kerascpp:NaN"}};
  return t;
}

// The non-finite doubles of the JSON value as stand-in strings (in place).
void to_stand_ins(Json& j) {
  if (j.is_number_float() && !std::isfinite(j.get<double>())) {
    const double v = j.get<double>();
    j = std::string(tokens()[std::isnan(v) ? 2 : v > 0 ? 1 : 0].stand_in);
  } else if (j.is_structured()) {
    for (Json& e : j) to_stand_ins(e);
  }
}

}  // namespace

std::string dump_python_json(const Json& j) {
  Json copy = j;
  to_stand_ins(copy);
  std::string text = copy.dump();
  for (const Token& t : tokens()) {
    // dump() escapes U+0001 as \u0001.
    const std::string quoted = "\"\\u0001" + std::string(t.stand_in.substr(1)) + "\"";
    for (size_t at = text.find(quoted); at != std::string::npos; at = text.find(quoted, at + t.bare.size()))
      text.replace(at, quoted.size(), t.bare);
  }
  return text;
}

}  // namespace kerascpp::io
