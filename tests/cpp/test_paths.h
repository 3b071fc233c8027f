// Paths of the repository and the build tree for tests (set by CMake).
#pragma once

#include <string>

namespace kerascpp::testing {
inline std::string source_path(const std::string& rel) { return std::string(KCPP_SOURCE_DIR) + "/" + rel; }
inline std::string fixture(const std::string& rel) { return source_path("tests/fixtures/" + rel); }
inline std::string temp_path(const std::string& name) { return std::string(KCPP_BINARY_DIR) + "/test_tmp_" + name; }
}  // namespace kerascpp::testing
