// Reading zip archives (the .keras format): members are located through the central directory and
// handed out in place. Keras stores every member uncompressed, so model.weights.h5 is read straight
// from the memory-mapped archive with no copy; DEFLATE members are inflated into a buffer.
//
//   ZipArchive zip = ZipArchive::open("model.keras");            // maps the file (FileMapping)
//   ZipMember config = zip.member("config.json");
//   std::string json(config.data, config.size);
//   ZipMember weights = zip.member("model.weights.h5");           // points into the mapping
//   H5File h5 = H5File::open_image(weights.data, weights.size, "model.keras/model.weights.h5",
//                                  weights.keepalive);
//
// A member's keepalive holds the mapping (or the inflated buffer), so member data outlives the
// archive object. Handles ZIP64 and archive comments; refuses encrypted and multi-disk archives.
// Errors are IOError and name the archive and the member. If another process truncates a mapped
// file, touching the lost pages raises SIGBUS: archives are assumed not to change while open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "io/mapping/file_mapping.h"

namespace kerascpp::io {

struct ZipMember {
  const char* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> keepalive;  // keeps `data` valid
  FileMapping::Ptr mapping;  // the archive's file mapping when `data` lies in it (a STORED member of open())
};

// One central-directory entry.
struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflate
  uint16_t flags = 0;
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t local_header_offset = 0;
};

// What a member may inflate to (LoadLimits in kerascpp/model.h), checked against the sizes the
// central directory declares before anything is allocated.
struct ZipLimits {
  uint64_t max_member_bytes = UINT64_MAX;
  double max_compression_ratio = 0;          // 0: none but DEFLATE's own (about 1032:1)
  static constexpr uint64_t kRatioFloor = 1u << 20;  // members up to 1 MiB are not held to the ratio
};

class ZipArchive {
 public:
  // views: map the file writable (private), so that members' bytes can become weights
  // (LoadOptions::mmap_weights; ZipMember::mapping).
  static ZipArchive open(const std::string& path, bool views = false);
  // The archive in `bytes`, the file at `path` read or mapped (FileMapping::open or read).
  static ZipArchive open(FileMapping::Ptr bytes, const std::string& path);
  // An archive in memory. The bytes must stay valid while the archive or any member taken from it
  // is alive: pass `keepalive` to tie them to it.
  static ZipArchive from_memory(const void* data, size_t size, std::string display_name,
                                std::shared_ptr<const void> keepalive = {});

  const std::string& name() const { return name_; }
  std::vector<std::string> names() const;  // in archive order
  const std::vector<ZipEntry>& entries() const { return entries_; }
  bool has(std::string_view member) const;
  const ZipEntry& entry(std::string_view member) const;  // throws IOError naming what exists
  // The member's bytes: in place for STORED members, inflated for DEFLATE ones. verify_crc checks
  // the CRC-32 (off by default: it reads every byte).
  ZipMember member(std::string_view member, bool verify_crc = false) const;
  // The member's size once inflated, as declared, after checking that its stored bytes lie in the file
  // (IOError) and that the size passes the limits (ValueError naming the member, its sizes and the
  // limit), before anything is read or allocated.
  uint64_t checked_size(std::string_view member) const;
  void set_limits(const ZipLimits& limits) { limits_ = limits; }

 private:
  ZipArchive(const char* data, size_t size, std::string name, std::shared_ptr<const void> keepalive);
  void parse();
  const char* data_of(const ZipEntry& e) const;

  const char* data_;
  size_t size_;
  std::string name_;
  std::shared_ptr<const void> keepalive_;
  FileMapping::Ptr mapping_;  // set by open(): keepalive_ is this mapping
  ZipLimits limits_;
  std::vector<ZipEntry> entries_;
  std::unordered_map<std::string, size_t> index_;  // name -> entry (the last one, as Python does)
};

}  // namespace kerascpp::io
