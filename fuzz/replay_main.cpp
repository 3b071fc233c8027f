// The replay driver of a fuzz harness (CMakeLists.txt): runs LLVMFuzzerTestOneInput on every file
// under the paths given (files or folders, recursively), as libFuzzer would run a crash input. It fails
// when it finds no input at all, so that a test over a missing folder cannot pass by running nothing;
// an input that crashes or throws what the harness does not expect ends the run with the file named.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool run(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "%s (%zu bytes)\n", file.c_str(), bytes.size());
  try {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED: %s threw an error the harness does not expect: %s\n", file.c_str(), e.what());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  size_t count = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) ok = run(f) && ok, ++count;
    } else if (std::filesystem::is_regular_file(p)) {
      ok = run(p) && ok;
      ++count;
    } else {
      std::fprintf(stderr, "FAILED: no file or folder at %s\n", argv[i]);
      return 1;
    }
  }
  if (count == 0) {
    std::fprintf(stderr, "FAILED: no input to replay\n");
    return 1;
  }
  std::fprintf(stderr, "%zu input(s) replayed%s\n", count, ok ? "" : ", some FAILED");
  return ok ? 0 : 1;
}
