// Internal: the zip record layouts shared by ZipArchive and ZipWriter (PKWARE APPNOTE 4.3 and 4.5;
// field offsets as in CPython's zipfile structs). Little-endian throughout.
//
//   uint32_t sig = zipfmt::get32(p);
//   zipfmt::put16(&out, 20);
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace kerascpp::io::zipfmt {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
// Android zipalign's extra field: a 2-byte alignment, then zeros that pad the member's data to it.
constexpr uint16_t kAlignExtraId = 0xd935;

constexpr size_t kLocalSize = 30;        // fixed part of a local file header
constexpr size_t kCentralSize = 46;      // fixed part of a central directory header
constexpr size_t kEndSize = 22;          // end of central directory record, without comment
constexpr size_t kEnd64Size = 56;        // ZIP64 end of central directory record
constexpr size_t kEnd64LocatorSize = 20;

constexpr uint16_t kStored = 0;
constexpr uint16_t kDeflated = 8;
constexpr uint16_t kFlagEncrypted = 1 << 0;
constexpr uint16_t kFlagUtf8 = 1 << 11;

inline uint16_t get16(const char* p) {
  uint8_t b[2];
  std::memcpy(b, p, 2);
  return static_cast<uint16_t>(b[0] | b[1] << 8);
}
inline uint32_t get32(const char* p) {
  return get16(p) | static_cast<uint32_t>(get16(p + 2)) << 16;
}
inline uint64_t get64(const char* p) {
  return get32(p) | static_cast<uint64_t>(get32(p + 4)) << 32;
}

inline void put16(std::vector<char>* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xff));
  out->push_back(static_cast<char>(v >> 8));
}
inline void put32(std::vector<char>* out, uint32_t v) {
  put16(out, static_cast<uint16_t>(v & 0xffff));
  put16(out, static_cast<uint16_t>(v >> 16));
}
inline void put64(std::vector<char>* out, uint64_t v) {
  put32(out, static_cast<uint32_t>(v & 0xffffffffu));
  put32(out, static_cast<uint32_t>(v >> 32));
}

}  // namespace kerascpp::io::zipfmt
