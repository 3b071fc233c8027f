// parse_python_json: one pass over the text straight into the Json value, with Python's bare NaN /
// Infinity / -Infinity and the nesting limit checked on the way. It accepts what Json::parse accepts
// (RFC 8259, well-formed UTF-8, a leading byte-order mark) and makes the same values or errors: unsigned and
// signed integers as Json::parse types them, floats correctly rounded, a repeated key keeps its last
// value. Json::parse cost a third of loading a small model: its lexer copies each character through
// an input adapter and its parser goes through a SAX interface; this reads strings by runs of bytes.
#include <locale.h>
#include <stdlib.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "io/python_json.h"
#include "kerascpp/error.h"

namespace kerascpp::io {
namespace {

locale_t c_locale() {
  static const locale_t c = newlocale(LC_ALL_MASK, "C", locale_t{});
  return c;
}

class Reader {
 public:
  Reader(std::string_view text, int max_depth, std::string_view where)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), max_depth_(max_depth),
        where_(where) {}

  Json document() {
    if (end_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) p_ += 3;  // as Json::parse
    Json out;
    skip_space();
    value(out, 0);
    skip_space();
    // Json::parse reads a NUL byte as the end of the input (its lexer's C-string heritage): text
    // after one is ignored there, so here too.
    if (p_ != end_ && *p_ != '\0') fail("unexpected text after the value");
    return out;
  }

 private:
  const char* const begin_;
  const char* p_;
  const char* const end_;
  const int max_depth_;
  const std::string_view where_;

  // Json::parse's error: its id, line and column, and the text from the error on (a few bytes).
  [[noreturn]] void fail(const std::string& what) const {
    nlohmann::detail::position_t at;
    at.chars_read_total = static_cast<size_t>(p_ - begin_) + 1;
    for (const char* c = begin_; c < p_; ++c) {
      ++at.chars_read_current_line;
      if (*c == '\n') ++at.lines_read, at.chars_read_current_line = 0;
    }
    ++at.chars_read_current_line;
    std::string near;
    for (const char* c = p_; c < end_ && near.size() < 24; ++c) near += printable(*c);
    throw Json::parse_error::create(101, at, "syntax error - " + what + (p_ < end_ ? "; at '" + near + "'" : ""),
                                    nullptr);
  }

  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  bool next_is(std::string_view word) const {
    return static_cast<size_t>(end_ - p_) >= word.size() && std::memcmp(p_, word.data(), word.size()) == 0;
  }

  void value(Json& out, int depth) {
    if (p_ == end_) fail("unexpected end of input");
    switch (*p_) {
      case '{': return object(out, depth + 1);
      case '[': return array(out, depth + 1);
      case '"': out = Json(Json::value_t::string); return string(out.get_ref<std::string&>());
      case 't': return literal("true", out, Json(true));
      case 'f': return literal("false", out, Json(false));
      case 'n': return literal("null", out, Json(nullptr));
      case 'N': return literal("NaN", out, Json(std::numeric_limits<double>::quiet_NaN()));
      case 'I': return literal("Infinity", out, Json(std::numeric_limits<double>::infinity()));
      case '-':
        if (next_is("-Infinity")) return literal("-Infinity", out, Json(-std::numeric_limits<double>::infinity()));
        return number(out);
      default:
        if (*p_ >= '0' && *p_ <= '9') return number(out);
        fail(std::string("unexpected character '") + printable(*p_) + "'");
    }
  }

  static std::string printable(char c) {
    if (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) return std::string(1, c);
    char b[8];
    std::snprintf(b, sizeof b, "\\x%02x", static_cast<unsigned char>(c));
    return b;
  }

  void literal(std::string_view word, Json& out, Json v) {
    if (!next_is(word)) fail("invalid literal");
    p_ += word.size();
    out = std::move(v);
  }

  void enter(int depth) const {
    if (depth > max_depth_)
      KCPP_THROW(ValueError, where_, " nests [ ] and { } deeper than the limit of ", max_depth_,
                 " levels (LoadLimits::max_json_depth), at byte ", p_ - begin_);
  }

  void object(Json& out, int depth) {
    enter(depth);
    ++p_;
    out = Json(Json::value_t::object);
    Json::object_t& members = out.get_ref<Json::object_t&>();
    skip_space();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
      return;
    }
    std::string key;
    for (;;) {
      if (p_ == end_ || *p_ != '"') fail("expected a string as an object key");
      key.clear();
      string(key);
      skip_space();
      if (p_ == end_ || *p_ != ':') fail("expected ':' after an object key");
      ++p_;
      skip_space();
      // A repeated key keeps its last value, as Json::parse and Python's json.
      value(members.try_emplace(std::move(key)).first->second, depth);
      skip_space();
      if (p_ < end_ && *p_ == ',') {
        ++p_;
        skip_space();
        continue;
      }
      if (p_ < end_ && *p_ == '}') {
        ++p_;
        return;
      }
      fail("expected ',' or '}' after an object member");
    }
  }

  void array(Json& out, int depth) {
    enter(depth);
    ++p_;
    out = Json(Json::value_t::array);
    Json::array_t& items = out.get_ref<Json::array_t&>();
    skip_space();
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      return;
    }
    for (;;) {
      items.emplace_back();
      value(items.back(), depth);
      skip_space();
      if (p_ < end_ && *p_ == ',') {
        ++p_;
        skip_space();
        continue;
      }
      if (p_ < end_ && *p_ == ']') {
        ++p_;
        return;
      }
      fail("expected ',' or ']' after an array element");
    }
  }

  // The first byte from p on that ends a run of plain ASCII: '"', '\\', a control character or a
  // byte >= 0x80 (or end). Sixteen bytes at a time with SSE2 (every x86-64 has it), else eight (a
  // string's bytes cost ~10 instructions each one by one; keys and class names are most of a config).
  static const char* plain_run(const char* p, const char* end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      // A signed byte below 0x20 is a control character or a byte >= 0x80.
      const __m128i special = _mm_or_si128(
          _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)), _mm_cmplt_epi8(v, space));
      if (const int mask = _mm_movemask_epi8(special)) return p + __builtin_ctz(static_cast<unsigned>(mask));
      p += 16;
    }
#endif
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
    while (end - p >= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      // A byte < 0x20 or >= 0x80: (w - 0x20 per byte) borrows or w has its high bit. Then '"' and '\\'.
      const uint64_t special = ((w - 0x2020202020202020ull) | w) & kHigh;
      if (special | has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '\\'))) break;
      p += 8;
    }
    while (p < end) {
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
      ++p;
    }
    return p;
  }

  // The string at p_ (its opening quote) appended to out; p_ ends past the closing quote.
  void string(std::string& out) {
    ++p_;
    for (;;) {
      const char* run = p_;
      p_ = plain_run(p_, end_);
      out.append(run, static_cast<size_t>(p_ - run));
      if (p_ == end_) fail("missing closing quote of a string");
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return;
      }
      if (c == '\\') {
        escape(out);
      } else if (c < 0x20) {
        fail("control character U+00" + std::string(1, "0123456789ABCDEF"[c >> 4]) + "0123456789ABCDEF"[c & 15] +
             " must be escaped in a string");
      } else {
        utf8_sequence(out);
      }
    }
  }

  // One well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF).
  void utf8_sequence(std::string& out) {
    const auto* u = reinterpret_cast<const unsigned char*>(p_);
    const size_t left = static_cast<size_t>(end_ - p_);
    const unsigned char b0 = u[0];
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
    if (b0 >= 0xC2 && b0 <= 0xDF) n = 2;
    else if (b0 >= 0xE0 && b0 <= 0xEF) n = 3, lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
    else if (b0 >= 0xF0 && b0 <= 0xF4) n = 4, lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
    bool ok = n != 0 && left >= n && u[1] >= lo && u[1] <= hi;
    for (size_t i = 2; ok && i < n; ++i) ok = u[i] >= 0x80 && u[i] <= 0xBF;
    if (!ok) fail("invalid UTF-8 byte in a string");
    out.append(p_, n);
    p_ += n;
  }

  unsigned hex4() {
    if (end_ - p_ < 4) fail("a \\u escape needs four hexadecimal digits");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else fail("a \\u escape needs four hexadecimal digits");
    }
    return v;
  }

  void escape(std::string& out) {
    ++p_;  // the backslash
    if (p_ == end_) fail("missing closing quote of a string");
    const char c = *p_++;
    switch (c) {
      case '"': out += '"'; return;
      case '\\': out += '\\'; return;
      case '/': out += '/'; return;
      case 'b': out += '\b'; return;
      case 'f': out += '\f'; return;
      case 'n': out += '\n'; return;
      case 'r': out += '\r'; return;
      case 't': out += '\t'; return;
      case 'u': break;
      default: fail("invalid escape in a string");
    }
    unsigned cp = hex4();
    if (cp >= 0xDC00 && cp <= 0xDFFF) fail("a low surrogate \\u escape without a high one before it");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (!next_is("\\u")) fail("a high surrogate \\u escape must be followed by a low one");
      p_ += 2;
      const unsigned low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) fail("a high surrogate \\u escape must be followed by a low one");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  void digits() {
    if (p_ == end_ || *p_ < '0' || *p_ > '9') fail("expected a digit in a number");
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? as Json::parse types it: without fraction or
  // exponent an unsigned (or, negative, a signed) integer, a float when it does not fit or has either.
  void number(Json& out) {
    const char* start = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ < end_ && *p_ == '0') ++p_;
    else digits();
    bool integral = true;
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      digits();
      integral = false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      digits();
      integral = false;
    }
    if (integral) {
      if (negative) {
        int64_t v = 0;
        if (std::from_chars(start, p_, v).ec == std::errc()) return void(out = v);
      } else {
        uint64_t v = 0;
        if (std::from_chars(start, p_, v).ec == std::errc()) return void(out = v);
      }
    }
    double d = 0;
    const auto r = std::from_chars(start, p_, d);
    if (r.ec == std::errc::result_out_of_range) {  // as Json::parse: an overflow is an error, an underflow 0
      const std::string token(start, p_);
      d = ::strtod_l(token.c_str(), nullptr, c_locale());  // '.' whatever the process's LC_NUMERIC
      if (!std::isfinite(d)) throw Json::out_of_range::create(406, "number overflow parsing '" + token + "'", nullptr);
    }
    out = d;
  }
};

}  // namespace

Json parse_python_json(std::string_view text, int max_depth, std::string_view where) {
  return Reader(text, max_depth, where).document();
}

}  // namespace kerascpp::io
