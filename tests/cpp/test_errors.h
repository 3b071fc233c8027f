// The text of the error a call throws, for the tests of error messages.
//   EXPECT_NE(error_of([&] { m.predict({x}); }).find("Layer 'lstm'"), std::string::npos);
#pragma once

#include <exception>
#include <functional>
#include <string>

namespace kerascpp::testing {
// What f throws, or "" when it throws nothing.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
}  // namespace kerascpp::testing
