// Helpers for the container tests: fixture paths, temporary files, byte I/O and error capture.
//
//   std::vector<char> bytes = read_bytes(fixture("keras3_mlp.h5"));
//   std::string msg = error_of<IOError>([&] { H5File::open(temp_path("missing.h5")); });
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kerascpp/error.h"

namespace kerascpp::io::testing {

inline std::string fixture(const std::string& name) {
  return std::string(KCPP_SOURCE_DIR) + "/tests/fixtures/containers/" + name;
}

// A path under the build folder; the folder is created on first use.
inline std::string temp_path(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(KCPP_BINARY_DIR) / "containers_tmp";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

inline std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Runs f, which must throw E; returns the message ("" and a test failure otherwise).
template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw the wrong exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

}  // namespace kerascpp::io::testing
