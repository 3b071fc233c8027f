// Python's number formatting, as Keras's text comes out of it: repr(float) for CSVLogger and
// messages, format specs for ModelCheckpoint's filepath, which Keras fills with
// `self.filepath.format(epoch=epoch + 1, **logs)` (keras/src/callbacks/model_checkpoint.py).
// Follows CPython's Python/formatter_unicode.c and Python/pystrtod.c.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "kerascpp/error.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {
namespace detail {
namespace {

// Shortest round-trip digits of |v| > 0 (no trailing zeros) and the exponent X of d.ddd x 10^X.
void shortest_digits(double v, std::string* digits, int* exp10) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
  std::string s(buf, r.ptr);
  size_t e = s.find('e');
  *exp10 = std::atoi(s.c_str() + e + 1);
  digits->clear();
  for (size_t i = 0; i < e; ++i)
    if (s[i] != '.') *digits += s[i];
}

// Digits rounded to `sig` significant digits (correctly rounded, as glibc's printf and Python's
// dtoa both are); trailing zeros kept.
void rounded_digits(double v, int sig, std::string* digits, int* exp10) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*e", sig - 1, std::fabs(v));
  std::string s(buf);
  size_t e = s.find('e');
  *exp10 = std::atoi(s.c_str() + e + 1);
  digits->clear();
  for (size_t i = 0; i < e; ++i)
    if (s[i] != '.') *digits += s[i];
}

std::string exp_suffix(int x, char e) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%c%c%02d", e, x < 0 ? '-' : '+', std::abs(x));
  return buf;
}

// pystrtod.c's format_float_short: `digits` with the decimal point after `decpt` digits
// (value = 0.DIGITS x 10^decpt), in exponent form or not; add_dot_0 writes "12.0" for an integer.
std::string place_point(const std::string& digits, int decpt, bool use_exp, bool add_dot_0) {
  std::string out;
  if (use_exp) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out.append(".").append(digits, 1);
    return out + exp_suffix(decpt - 1, 'e');
  }
  // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  if (decpt <= 0) {
    out = "0.";
    out.append(static_cast<size_t>(-decpt), '0');
    return out + digits;
  }
  if (decpt >= static_cast<int>(digits.size()))
    return digits + std::string(decpt - digits.size(), '0') + (add_dot_0 ? ".0" : "");
  return digits.substr(0, decpt) + "." + digits.substr(decpt);
}

std::string strip_zeros(std::string d) {
  while (d.size() > 1 && d.back() == '0') d.pop_back();
  return d;
}

struct Spec {
  char fill = ' ', align = 0, sign = '-', type = 0, grouping = 0;
  bool alt = false, zero = false, z = false;
  int width = -1, precision = -1;
};

Spec parse_spec(const std::string& s, bool is_int) {
  const char* kind = is_int ? "int" : "float";
  Spec p;
  size_t i = 0;
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '=' || c == '^'; };
  if (s.size() >= 2 && is_align(s[1])) {
    p.fill = s[0], p.align = s[1], i = 2;
  } else if (!s.empty() && is_align(s[0])) {
    p.align = s[0], i = 1;
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) p.sign = s[i++];
  if (i < s.size() && s[i] == 'z') p.z = true, ++i;
  if (i < s.size() && s[i] == '#') p.alt = true, ++i;
  if (i < s.size() && s[i] == '0') p.zero = true, ++i;
  size_t w = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i > w) p.width = std::stoi(s.substr(w, i - w));
  if (i < s.size() && (s[i] == ',' || s[i] == '_')) p.grouping = s[i++];
  if (i < s.size() && s[i] == '.') {
    size_t d = ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    KCPP_CHECK(i > d, ValueError, "Format specifier missing precision");
    p.precision = std::stoi(s.substr(d, i - d));
  }
  if (s.size() - i > 1) KCPP_THROW(ValueError, "Invalid format specifier '", s, "' for object of type '", kind, "'");
  if (i < s.size()) p.type = s[i];
  if (p.zero && !p.align) p.fill = '0', p.align = '=';
  return p;
}

// Inserts `sep` every `every` digits from the right of the leading run of digits of `body`.
std::string group(const std::string& body, char sep, int every) {
  size_t end = 0;
  while (end < body.size() && std::isxdigit(static_cast<unsigned char>(body[end]))) ++end;
  if (body.compare(0, 3, "inf") == 0 || body.compare(0, 3, "nan") == 0) return body;
  std::string head;
  for (size_t i = 0; i < end; ++i) {
    if (i > 0 && (end - i) % every == 0) head += sep;
    head += body[i];
  }
  return head + body.substr(end);
}

std::string pad(const Spec& p, const std::string& sign, const std::string& body, char default_align) {
  std::string all = sign + body;
  int n = static_cast<int>(all.size());
  if (p.width <= n) return all;
  int fill = p.width - n;
  char align = p.align ? p.align : default_align;
  if (align == '<') return all + std::string(fill, p.fill);
  if (align == '^') return std::string(fill / 2, p.fill) + all + std::string(fill - fill / 2, p.fill);
  if (align == '=') return sign + std::string(fill, p.fill) + body;
  return std::string(fill, p.fill) + all;
}

std::string format_float(double v, Spec p) {
  char t = p.type;
  KCPP_CHECK(t == 0 || std::string("eEfFgGn%").find(t) != std::string::npos, ValueError, "Unknown format code '",
             std::string(1, t), "' for object of type 'float'");
  if (t == 'n') t = 'g';
  bool neg = std::signbit(v) && !std::isnan(v);
  double a = std::fabs(v);
  bool upper = t == 'E' || t == 'F' || t == 'G';
  std::string body;
  if (!std::isfinite(a)) {
    body = std::isnan(a) ? "nan" : "inf";
    if (upper)
      for (char& c : body) c = static_cast<char>(std::toupper(c));
    if (t == '%') body += "%";
  } else if (t == 0) {
    // No type: repr without a precision, else 'g' that keeps a ".0" and goes to exponent form one
    // digit earlier (formatter_unicode.c: Py_DTSF_ADD_DOT_0).
    std::string digits;
    int x = 0;
    if (a == 0) {
      digits = "0", x = 0;
    } else if (p.precision < 0) {
      shortest_digits(a, &digits, &x);
    } else {
      rounded_digits(a, std::max(p.precision, 1), &digits, &x);
      digits = strip_zeros(digits);
    }
    int decpt = x + 1;
    int limit = p.precision < 0 ? 16 : std::max(p.precision, 1) - 1;
    bool use_exp = a != 0 && (decpt <= -4 || decpt > limit);
    body = place_point(digits, decpt, use_exp, true);
  } else {
    int prec = p.precision < 0 ? 6 : p.precision;
    char fmt[16];
    char conv = t == '%' ? 'f' : static_cast<char>(std::tolower(t));
    std::snprintf(fmt, sizeof fmt, "%%%s.*%c", p.alt ? "#" : "", conv);
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, prec, t == '%' ? a * 100 : a);
    body = buf;
    if (upper)
      for (char& c : body) c = static_cast<char>(std::toupper(c));
    if (t == '%') body += "%";
  }
  if (p.z && neg && body.find_first_of("123456789") == std::string::npos) neg = false;
  if (p.grouping) body = group(body, p.grouping, 3);
  std::string sign = neg ? "-" : p.sign == '+' ? "+" : p.sign == ' ' ? " " : "";
  return pad(p, sign, body, '>');
}

std::string format_int(int64_t v, Spec p) {
  if (p.type && std::string("eEfFgG%").find(p.type) != std::string::npos)
    return format_float(static_cast<double>(v), p);
  KCPP_CHECK(p.type == 0 || std::string("dnbxXo").find(p.type) != std::string::npos, ValueError,
             "Unknown format code '", std::string(1, p.type), "' for object of type 'int'");
  KCPP_CHECK(p.precision < 0, ValueError, "Precision not allowed in integer format specifier");
  uint64_t a = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int base = p.type == 'b' ? 2 : p.type == 'o' ? 8 : (p.type == 'x' || p.type == 'X') ? 16 : 10;
  KCPP_CHECK(!(p.grouping == ',' && base != 10), ValueError, "Cannot specify ',' with '", std::string(1, p.type), "'.");
  char buf[80];
  auto r = std::to_chars(buf, buf + sizeof buf, a, base);
  std::string body(buf, r.ptr);
  if (p.type == 'X')
    for (char& c : body) c = static_cast<char>(std::toupper(c));
  if (p.grouping) body = group(body, p.grouping, base == 10 ? 3 : 4);
  std::string prefix;
  if (p.alt && base != 10) prefix = std::string("0") + (p.type == 'X' ? 'X' : p.type);
  std::string sign = v < 0 ? "-" : p.sign == '+' ? "+" : p.sign == ' ' ? " " : "";
  return pad(p, sign + prefix, body, '>');
}

}  // namespace

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return format_float(v, Spec{});
}

std::string python_format(double value, bool is_int, const std::string& spec) {
  Spec p = parse_spec(spec, is_int);
  return is_int ? format_int(static_cast<int64_t>(value), p) : format_float(value, p);
}

}  // namespace detail

std::string format_filepath(const std::string& pattern, const std::map<std::string, double>& values) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '}') {
      KCPP_CHECK(i + 1 < pattern.size() && pattern[i + 1] == '}', ValueError,
                 "Single '}' encountered in format string");
      out += '}', ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '{') {
      out += '{', ++i;
      continue;
    }
    size_t close = pattern.find('}', i + 1);
    KCPP_CHECK(i + 1 < pattern.size(), ValueError, "Single '{' encountered in format string");
    KCPP_CHECK(close != std::string::npos, ValueError, "expected '}' before end of string");
    std::string field = pattern.substr(i + 1, close - i - 1);
    i = close;
    std::string spec, conv;
    if (size_t colon = field.find(':'); colon != std::string::npos) spec = field.substr(colon + 1), field.resize(colon);
    if (size_t bang = field.find('!'); bang != std::string::npos) conv = field.substr(bang + 1), field.resize(bang);
    KCPP_CHECK(spec.find('{') == std::string::npos, NotImplementedError,
               "Nested replacement fields in a callback filepath are not supported. Received: filepath=", pattern);
    bool positional = !field.empty() && field.find_first_not_of("0123456789") == std::string::npos;
    KCPP_CHECK(!field.empty() && !positional, ValueError, "Replacement index ", field.empty() ? "0" : field,
               " out of range for positional args tuple. Received: filepath=", pattern);
    KCPP_CHECK(field.find_first_of(".[") == std::string::npos, ValueError,
               "Attribute and index lookups are not supported in a callback filepath. Received: filepath=", pattern);
    auto it = values.find(field);
    // Keras re-raises the KeyError with this text (model_checkpoint.py _get_file_path).
    KCPP_CHECK(it != values.end(), ValueError, "Failed to format this callback filepath: \"", pattern,
               "\". Reason: '", field, "'");
    bool is_int = field == "epoch" || field == "batch";  // Keras passes these as ints, logs as floats
    if (conv.empty()) {
      out += detail::python_format(it->second, is_int, spec);
      continue;
    }
    KCPP_CHECK(conv == "r" || conv == "s" || conv == "a", ValueError,
               "Unknown conversion specifier ", conv);
    // str(number) / repr(number), then the spec applied to the string (left-aligned, precision
    // truncates).
    std::string s = is_int ? std::to_string(static_cast<int64_t>(it->second)) : detail::python_float_repr(it->second);
    detail::Spec p = detail::parse_spec(spec, false);
    KCPP_CHECK(p.type == 0 || p.type == 's', ValueError, "Unknown format code '", std::string(1, p.type),
               "' for object of type 'str'");
    if (p.precision >= 0 && static_cast<int>(s.size()) > p.precision) s.resize(p.precision);
    out += detail::pad(p, "", s, '<');
  }
  return out;
}

}  // namespace kerascpp::callbacks
