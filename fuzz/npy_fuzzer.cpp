// libFuzzer harness: the .npy reader (io/npy.h) on any bytes.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "io/npy/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kerascpp::fuzz::expected_errors([&] { kerascpp::io::read_npy_bytes(data, size, "fuzz.npy"); });
  return 0;
}
