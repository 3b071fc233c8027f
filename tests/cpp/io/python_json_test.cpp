// Python's JSON dialect in Keras configs: bare NaN / Infinity / -Infinity read as non-finite numbers and
// written back as bare tokens; strings that spell them stay strings both ways.
#include <gtest/gtest.h>

#include <cmath>

#include "io/python_json.h"

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

}  // namespace
}  // namespace kerascpp::io
