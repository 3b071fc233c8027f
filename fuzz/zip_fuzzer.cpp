// libFuzzer harness: the zip reader (io/zip/zip_archive.h) on any bytes: the central directory is
// parsed, then every member is read (inflated, CRC checked) under the default LoadLimits. Anything
// but kerascpp's own errors is a finding.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "io/zip/zip_archive.h"
#include "kerascpp/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kerascpp;
  fuzz::expected_errors([&] {
    io::ZipArchive zip = io::ZipArchive::from_memory(data, size, "fuzz.keras");
    const LoadLimits limits;
    zip.set_limits({limits.max_member_bytes, limits.max_compression_ratio});
    for (const io::ZipEntry& e : zip.entries()) fuzz::expected_errors([&] { zip.member(e.name, /*verify_crc=*/true); });
  });
  return 0;
}
