// Writing zip archives the way Keras's zipfile.ZipFile(f, "w") does: every member STORED, with its
// CRC-32 and a DOS timestamp, ZIP64 records only where a size or offset needs them (Python's
// rule: over 2**31 - 1). Python's zipfile and ZipArchive read the output. kerascpp's .keras saves
// align model.weights.h5 to 64 bytes (add's `align`), which Keras's do not.
//
//   ZipWriter zip;                                  // in memory
//   zip.add("metadata.json", metadata);
//   zip.add("config.json", config);
//   zip.add("model.weights.h5", h5_bytes.data(), h5_bytes.size());
//   std::vector<char> bytes = zip.finish();
//
//   ZipWriter to_disk = ZipWriter::to_fd(fd, "model.keras.tmp");   // streams members to fd;
//   ...; to_disk.finish();                                          // the caller fsyncs and closes
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

namespace kerascpp::io {

struct ZipWriterOptions {
  std::time_t mtime = -1;    // member timestamps (local time, as Python); -1 means now
  bool force_zip64 = false;  // ZIP64 records even for small archives (tests, interop checks)
};

class ZipWriter {
 public:
  using Options = ZipWriterOptions;
  ZipWriter() : ZipWriter(Options{}) {}
  explicit ZipWriter(Options options);  // in memory: finish() returns the bytes
  // Writes to an open file descriptor as members are added; finish() writes the directory.
  static ZipWriter to_fd(int fd, std::string display_name, Options options = {});

  // align > 1 pads the local header (an extra field, as Android's zipalign writes) so that the data
  // starts at a multiple of `align` in the archive: a weights member whose floats are aligned can be
  // mapped as views (LoadOptions::mmap_weights). Readers skip the field.
  void add(std::string_view name, const void* data, size_t size, size_t align = 1);
  void add(std::string_view name, std::string_view bytes) { add(name, bytes.data(), bytes.size()); }
  // Writes the central directory and end records. In memory: returns the archive; with a file
  // descriptor: returns {}. The writer accepts nothing afterwards.
  std::vector<char> finish();

 private:
  struct Member {
    std::string name;
    uint32_t crc;
    uint64_t size;
    uint64_t offset;  // of the local header
  };
  bool local_zip64(uint64_t size) const;
  void emit(const void* data, size_t size);  // to the buffer or the descriptor
  void emit(const std::vector<char>& bytes) { emit(bytes.data(), bytes.size()); }

  Options options_;
  bool in_memory_ = true;
  int fd_ = -1;
  std::string name_ = "<memory>";
  std::vector<char> buffer_;  // in-memory output
  uint64_t written_ = 0;
  uint16_t dos_time_ = 0, dos_date_ = 0;
  std::vector<Member> members_;
  bool finished_ = false;
};

}  // namespace kerascpp::io
