// Python's JSON dialect in Keras configs: bare NaN / Infinity / -Infinity read as non-finite numbers and
// written back as bare tokens; strings that spell them stay strings both ways.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include "../test_paths.h"
#include "io/python_json.h"
#include "kerascpp/error.h"

namespace kerascpp::io {
namespace {

TEST(PythonJson, BareTokensAreNumbersAndStringsStayStrings) {
  const std::string text =
      R"({"a": Infinity, "b": [-Infinity, NaN, 1e5], "s": "NaN", "t": "Infinity in text", "u": "say \"NaN\"", "NaN": 2})";
  const Json j = parse_python_json(text);
  EXPECT_TRUE(j["a"].is_number_float());
  EXPECT_EQ(j["a"].get<double>(), INFINITY);
  EXPECT_EQ(j["b"][0].get<float>(), -INFINITY);
  EXPECT_TRUE(std::isnan(j["b"][1].get<double>()));
  EXPECT_EQ(j["b"][2].get<double>(), 1e5);
  EXPECT_EQ(j["s"], "NaN");
  EXPECT_EQ(j["t"], "Infinity in text");
  EXPECT_EQ(j["u"], "say \"NaN\"");
  EXPECT_EQ(j["NaN"], 2);
  const std::string back = dump_python_json(j);
  EXPECT_EQ(back,
            R"({"NaN":2,"a":Infinity,"b":[-Infinity,NaN,100000.0],"s":"NaN","t":"Infinity in text","u":"say \"NaN\""})");
  EXPECT_EQ(dump_python_json(parse_python_json(back)), back);
  EXPECT_EQ(dump_python_json(Json{{"x", 1}}), R"({"x":1})");
  EXPECT_THROW(parse_python_json("{\"a\": Infinit}"), Json::parse_error);
}

// The reader makes what Json::parse makes: the same values with the same number types (unsigned,
// signed, float), or an error of the same kind where Json::parse has one.
void expect_as_json_parse(const std::string& text) {
  SCOPED_TRACE(text.size() < 200 ? text : text.substr(0, 200));
  Json want;
  try {
    want = Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error, or out_of_range for a float that overflows
    try {
      (void)parse_python_json(text);
      ADD_FAILURE() << "no error where Json::parse has " << e.what();
    } catch (const Json::exception& got) {
      EXPECT_EQ(got.id, e.id) << got.what() << " where Json::parse has " << e.what();
    }
    return;
  }
  const Json got = parse_python_json(text);
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.dump(), want.dump());  // dump tells 1 from 1.0 and unsigned from signed apart
  std::function<void(const Json&, const Json&)> same_types = [&](const Json& a, const Json& b) {
    ASSERT_EQ(a.type(), b.type()) << a.dump();
    if (a.is_object())
      for (auto it = a.begin(); it != a.end(); ++it) same_types(*it, b.at(it.key()));
    if (a.is_array())
      for (size_t i = 0; i < a.size(); ++i) same_types(a[i], b[i]);
  };
  same_types(got, want);
}

TEST(PythonJson, ReadsWhatJsonParseReads) {
  for (const char* text : {
           R"({"a": 1, "b": -1, "c": 1.5, "d": -0, "e": 0.0, "f": 1e3, "g": 1E-3, "h": -2.5e+2})",
           "18446744073709551615", "18446744073709551616", "-9223372036854775808", "-9223372036854775809",
           "1e400", "-1e400", "1e-400", "123456789012345678901234567890", "0.1", "3.141592653589793238",
           R"(["\"\\\/\b\f\n\r\t", "\u00e9\u20ac\ud83d\ude00"])", "[\"caf\xc3\xa9\", \"\xe2\x82\xac\", \"\xf0\x9f\x98\x80\"]",
           R"({"k": 1, "k": 2})", R"({"b": {"x": [1, {"y": null}]}, "a": [true, false, null, [], {}]})",
           " \t\r\n [ 1 , 2 ] \n", "\xEF\xBB\xBF{\"bom\": 1}", R"("")", "[]", "{}",
           // not JSON
           "", " ", "[", "]", "{", "[1,]", "[,1]", R"({"a" 1})", R"({"a": 1,})", R"({a: 1})", "01", "-", "1.", ".5",
           "1e", "1e+", "+1", "--1", "0x10", "tru", "nul", "True", R"("abc)", "\"a\x01" "b\"", R"("\x")",
           R"("\u12")", R"("\ud83d")", R"("\ud83d\u0041")", R"("\ude00")", "\"\xc3\"", "\"\xc0\xaf\"",
           "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xff\"", "[1] 2", "{} {}", "[1]]"})
    expect_as_json_parse(text);
  using namespace std::string_literals;
  for (const std::string& text : {
           // Json::parse stops at a NUL byte after the value; inside a value it is an error
           "[1]\0junk"s, "1\0"s, "\0"s, "{} \0x"s, "[1,\0 2]"s, "\"a\0b\""s,
           // Python's tokens are exact words (these are errors for both)
           "-NaN"s, "nan"s, "-Inf"s, "Infinityx"s, "[NaN1]"s,
           // a byte-order mark alone, cut short, or twice
           "\xEF\xBB\xBF"s, "\xEF\xBB"s, "\xEF\xBB\xBF\xEF\xBB\xBF[]"s,
           // a repeated key whose values are structures
           R"({"k": {"a": [1, 2]}, "k": {"b": {"c": []}}})"s, R"({"k": [1], "k": {"x": 1}})"s,
           // UTF-8 at the edges: overlong 3- and 4-byte forms, the first and last of each length,
           // a lone continuation byte, a lead byte past U+10FFFF, a sequence cut by the end of the text
           "\"\xE0\x80\x80\""s, "\"\xF0\x80\x80\x80\""s, "\"\xE0\xA0\x80\""s, "\"\xEF\xBF\xBF\""s,
           "\"\xF4\x8F\xBF\xBF\""s, "\"\xF0\x90\x80\x80\""s, "\"\xC2\x80\""s, "\"\x80\""s, "\"\xF5\x80\x80\x80\""s,
           "\"\xE2\x82"s, "\"\xE2\x82\""s,
           // a float that overflows inside a structure (out_of_range 406 for both)
           R"({"a": [1, {"b": -1e999}]})"s})
    expect_as_json_parse(text);
}

// A string's plain bytes are scanned 16 (SSE2) or 8 at a time: each byte that ends a plain run (a
// quote, a backslash, a control character, a byte >= 0x80) and the plain bytes next to those ranges
// (0x1f / 0x20, 0x7f), at every offset of a long string, as the whole text and inside structures; and
// strings the text ends inside, at every length.
TEST(PythonJson, EveryByteClassAtEveryOffsetOfAString) {
  using namespace std::string_literals;
  for (const std::string& special : {"\""s, "\\n"s, "\\u00e9"s, "\x01"s, "\x1f"s, " "s, "\x7f"s, "\xc3\xa9"s,
                                     "\xe2\x82\xac"s, "\x80"s, "\xff"s, "\\"s})
    for (size_t at = 0; at <= 40; ++at) {
      const std::string text = "\"" + std::string(at, 'a') + special + std::string(40 - at, 'b') + "\"";
      expect_as_json_parse(text);
      expect_as_json_parse("[" + text + ", \"" + std::string(at, 'k') + "\"]");
      expect_as_json_parse("{" + text + ": 1, \"z\": 2}");
    }
  for (size_t n = 0; n <= 40; ++n) {
    expect_as_json_parse("\"" + std::string(n, 'a'));
    expect_as_json_parse("[\"" + std::string(n, 'a') + "\\");
  }
}

TEST(PythonJson, ErrorsNameTheLineAndColumn) {
  try {
    (void)parse_python_json("{\n  \"a\": tru\n}");
    FAIL() << "no error";
  } catch (const Json::parse_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("line 2, column 8"), std::string::npos) << m;
    EXPECT_NE(m.find("invalid literal; at 'tru"), std::string::npos) << m;
  }
}

// Every JSON file Keras wrote for the fixtures (config.json, meta.json), read both ways.
TEST(PythonJson, ReadsEveryFixtureAsJsonParse) {
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(testing::fixture(""))) {
    if (e.path().extension() != ".json") continue;
    std::ifstream f(e.path());
    std::stringstream text;
    text << f.rdbuf();
    if (text.str().find("Infinity") != std::string::npos || text.str().find("NaN") != std::string::npos) continue;
    expect_as_json_parse(text.str());
    ++files;
  }
  EXPECT_GT(files, 100);
}

TEST(PythonJson, DepthOverTheLimitIsAValueErrorNamingWhereAndTheByte) {
  EXPECT_EQ(parse_python_json("[[[1]]]", 3), Json::parse("[[[1]]]"));
  try {
    (void)parse_python_json(R"({"a": [[1]]})", 2, "The model_config of m.h5");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("The model_config of m.h5 nests [ ] and { } deeper than the limit of 2 levels"), std::string::npos) << m;
    EXPECT_NE(m.find("LoadLimits::max_json_depth), at byte 7"), std::string::npos) << m;
  }
  // Objects count as arrays do, at the limit and over it; the byte counts a byte-order mark.
  EXPECT_NO_THROW(parse_python_json(R"({"a": {"b": {}}})", 3));
  EXPECT_THROW(parse_python_json(R"({"a": {"b": {"c": 1}}})", 2), ValueError);
  try {
    (void)parse_python_json("\xEF\xBB\xBF[[1]]", 1, "The text");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("at byte 4"), std::string::npos) << e.what();
  }
  // Brackets in strings are text; a deep text is refused before the reader's recursion could grow.
  EXPECT_EQ(parse_python_json(R"(["[[[[[[["])", 1), Json::array({"[[[[[[["}));
  EXPECT_THROW(parse_python_json(std::string(100000, '[') + std::string(100000, ']')), ValueError);
}

}  // namespace
}  // namespace kerascpp::io
