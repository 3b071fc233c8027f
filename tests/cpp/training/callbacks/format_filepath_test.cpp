// format_filepath and Python's float repr against Python's own str.format / repr results.
#include <gtest/gtest.h>

#include "callbacks_fixture.h"
#include "kerascpp/error.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {
namespace {

using testing::callbacks_reference;
using testing::num;

TEST(FormatFilepath, MatchesPythonStrFormat) {
  const auto& ref = callbacks_reference()["format_filepath"];
  std::map<std::string, double> values;
  for (auto it = ref["values"].begin(); it != ref["values"].end(); ++it) values[it.key()] = num(it.value());
  int checked = 0;
  for (const auto& c : ref["cases"]) {
    std::string pattern = c["pattern"];
    SCOPED_TRACE(pattern);
    if (c.contains("expected")) {
      EXPECT_EQ(format_filepath(pattern, values), c["expected"].get<std::string>());
    } else {
      // "KeyError: 'missing'" -> our ValueError's message holds "'missing'".
      std::string err = c["error"];
      std::string want = err.substr(err.find(": ") + 2);
      try {
        format_filepath(pattern, values);
        ADD_FAILURE() << "no error; Python: " << err;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what() << "\nPython: " << err;
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 60);
}

TEST(FormatFilepath, KerasMessageForAMissingLog) {
  try {
    format_filepath("ckpt-{val_acc:.2f}.keras", {{"epoch", 1}, {"loss", 0.5}});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "Failed to format this callback filepath: \"ckpt-{val_acc:.2f}.keras\". Reason: 'val_acc'");
  }
}

TEST(PythonFloatRepr, ShortestRoundTripInPythonsForm) {
  using detail::python_float_repr;
  EXPECT_EQ(python_float_repr(0.1), "0.1");
  EXPECT_EQ(python_float_repr(1.0), "1.0");
  EXPECT_EQ(python_float_repr(-0.0), "-0.0");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(0.00001), "1e-05");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(python_float_repr(123456789.125), "123456789.125");
  EXPECT_EQ(python_float_repr(1.5e-300), "1.5e-300");
  EXPECT_EQ(python_float_repr(static_cast<double>(0.1f)), "0.10000000149011612");
  EXPECT_EQ(python_float_repr(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(python_float_repr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(python_float_repr(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(python_float_repr(std::nan("")), "nan");
}

}  // namespace
}  // namespace kerascpp::callbacks
