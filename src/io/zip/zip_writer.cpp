// Record layouts and ZIP64 rules follow CPython's Lib/zipfile (FileHeader, _write_end_record).
#include "io/zip/zip_writer.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "io/zip/zip_format.h"
#include "kerascpp/error.h"

namespace kerascpp::io {
namespace {

using namespace zipfmt;

constexpr uint64_t kZip64Limit = (1ull << 31) - 1;  // zipfile.ZIP64_LIMIT
constexpr uint16_t kVersion = 20;                    // zipfile.DEFAULT_VERSION
constexpr uint16_t kVersionZip64 = 45;               // zipfile.ZIP64_VERSION
constexpr uint16_t kUnix = 3;                        // create_system
constexpr uint32_t kExternalAttr = 0600u << 16;      // -rw-------, as zipfile writes

bool is_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

}  // namespace

// Python puts a ZIP64 extra in the local header when the size might pass the limit (x 1.05).
bool ZipWriter::local_zip64(uint64_t size) const {
  return options_.force_zip64 || size * 105 / 100 > kZip64Limit;
}

ZipWriter::ZipWriter(Options options) : options_(options) {
  std::time_t t = options_.mtime >= 0 ? options_.mtime : std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  if (tm.tm_year < 80) tm = std::tm{0, 0, 0, 1, 0, 80, 0, 0, 0, 0, nullptr};  // DOS time starts 1980
  dos_date_ = static_cast<uint16_t>((tm.tm_year - 80) << 9 | (tm.tm_mon + 1) << 5 | tm.tm_mday);
  dos_time_ = static_cast<uint16_t>(tm.tm_hour << 11 | tm.tm_min << 5 | tm.tm_sec / 2);
}

ZipWriter ZipWriter::to_fd(int fd, std::string display_name, Options options) {
  ZipWriter w(options);
  w.in_memory_ = false;
  w.fd_ = fd;
  w.name_ = std::move(display_name);
  return w;
}

void ZipWriter::emit(const void* data, size_t size) {
  written_ += size;
  if (in_memory_) {
    const char* p = static_cast<const char*>(data);
    buffer_.insert(buffer_.end(), p, p + size);
    return;
  }
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) KCPP_THROW(IOError, "Unable to write zip archive \"", name_, "\": ", std::strerror(errno));
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void ZipWriter::add(std::string_view name, const void* data, size_t size, size_t align) {
  KCPP_CHECK(align >= 1 && align <= 4096, ValueError, "Zip member alignment must be 1 to 4096, not ", align);
  KCPP_CHECK(!finished_, ValueError, "Unable to add \"", name, "\" to zip archive \"", name_,
             "\": the archive is already finished");
  KCPP_CHECK(!name.empty() && name.size() <= 0xffff, ValueError, "Invalid zip member name of ",
             name.size(), " bytes for archive \"", name_, "\"");
  for (const Member& m : members_)
    KCPP_CHECK(m.name != name, ValueError, "Duplicate member \"", name, "\" in zip archive \"",
               name_, "\"");
  uint32_t crc = static_cast<uint32_t>(
      crc32_z(0, static_cast<const Bytef*>(data), static_cast<z_size_t>(size)));
  members_.push_back(Member{std::string(name), crc, size, written_});

  bool zip64 = local_zip64(size);
  std::vector<char> h;
  put32(&h, kLocalSig);
  h.push_back(static_cast<char>(zip64 ? kVersionZip64 : kVersion));
  h.push_back(0);
  put16(&h, is_ascii(name) ? 0 : kFlagUtf8);
  put16(&h, kStored);
  put16(&h, dos_time_);
  put16(&h, dos_date_);
  put32(&h, crc);
  put32(&h, zip64 ? 0xffffffffu : static_cast<uint32_t>(size));  // compressed size
  put32(&h, zip64 ? 0xffffffffu : static_cast<uint32_t>(size));
  put16(&h, static_cast<uint16_t>(name.size()));
  constexpr size_t kAlignExtra = 6;  // id, size, the alignment
  const size_t zip64_extra = zip64 ? 20 : 0, before_pad = kLocalSize + name.size() + zip64_extra + kAlignExtra;
  const size_t pad = align > 1 ? (align - (written_ + before_pad) % align) % align : 0;
  put16(&h, static_cast<uint16_t>(zip64_extra + (align > 1 ? kAlignExtra + pad : 0)));
  h.insert(h.end(), name.begin(), name.end());
  if (zip64) {
    put16(&h, kZip64ExtraId);
    put16(&h, 16);
    put64(&h, size);
    put64(&h, size);
  }
  if (align > 1) {
    put16(&h, kAlignExtraId);
    put16(&h, static_cast<uint16_t>(2 + pad));
    put16(&h, static_cast<uint16_t>(align));
    h.insert(h.end(), pad, '\0');
  }
  emit(h);
  if (size > 0) emit(data, size);
}

std::vector<char> ZipWriter::finish() {
  KCPP_CHECK(!finished_, ValueError, "Zip archive \"", name_, "\" is already finished");
  finished_ = true;
  uint64_t cd_offset = written_;
  bool force = options_.force_zip64;
  for (const Member& m : members_) {
    bool big = force || m.size > kZip64Limit;
    bool far = force || m.offset > kZip64Limit;
    std::vector<char> extra;
    if (big || far) {
      put16(&extra, kZip64ExtraId);
      put16(&extra, static_cast<uint16_t>(8 * ((big ? 2 : 0) + (far ? 1 : 0))));
      if (big) {
        put64(&extra, m.size);
        put64(&extra, m.size);
      }
      if (far) put64(&extra, m.offset);
    }
    // 4.5 whenever this member has ZIP64 data here or in its local header.
    bool zip64 = !extra.empty() || local_zip64(m.size);
    uint8_t version = static_cast<uint8_t>(zip64 ? kVersionZip64 : kVersion);
    std::vector<char> c;
    put32(&c, kCentralSig);
    c.push_back(static_cast<char>(version));  // made by
    c.push_back(static_cast<char>(kUnix));
    c.push_back(static_cast<char>(version));  // needed to extract
    c.push_back(0);
    put16(&c, is_ascii(m.name) ? 0 : kFlagUtf8);
    put16(&c, kStored);
    put16(&c, dos_time_);
    put16(&c, dos_date_);
    put32(&c, m.crc);
    put32(&c, big ? 0xffffffffu : static_cast<uint32_t>(m.size));
    put32(&c, big ? 0xffffffffu : static_cast<uint32_t>(m.size));
    put16(&c, static_cast<uint16_t>(m.name.size()));
    put16(&c, static_cast<uint16_t>(extra.size()));
    put16(&c, 0);  // comment
    put16(&c, 0);  // disk
    put16(&c, 0);  // internal attributes
    put32(&c, kExternalAttr);
    put32(&c, far ? 0xffffffffu : static_cast<uint32_t>(m.offset));
    c.insert(c.end(), m.name.begin(), m.name.end());
    c.insert(c.end(), extra.begin(), extra.end());
    emit(c);
  }
  uint64_t cd_end = written_;
  uint64_t cd_size = cd_end - cd_offset, count = members_.size();
  bool zip64_end = force || count > 0xffff || cd_offset > kZip64Limit || cd_size > kZip64Limit;
  std::vector<char> e;
  if (zip64_end) {
    put32(&e, kEnd64Sig);
    put64(&e, kEnd64Size - 12);  // size of the rest of the record
    put16(&e, kVersionZip64);
    put16(&e, kVersionZip64);
    put32(&e, 0);
    put32(&e, 0);
    put64(&e, count);
    put64(&e, count);
    put64(&e, cd_size);
    put64(&e, cd_offset);
    put32(&e, kEnd64LocatorSig);
    put32(&e, 0);
    put64(&e, cd_end);  // where the ZIP64 end record starts
    put32(&e, 1);
  }
  // With ZIP64 records present, readers take the 64-bit values; forced archives put the sentinels
  // here so that readers must.
  put32(&e, kEndSig);
  put16(&e, 0);
  put16(&e, 0);
  uint16_t count16 = force || count > 0xffff ? 0xffff : static_cast<uint16_t>(count);
  put16(&e, count16);
  put16(&e, count16);
  put32(&e, force || cd_size > 0xffffffffu ? 0xffffffffu : static_cast<uint32_t>(cd_size));
  put32(&e, force || cd_offset > 0xffffffffu ? 0xffffffffu : static_cast<uint32_t>(cd_offset));
  put16(&e, 0);  // comment length
  emit(e);
  return in_memory_ ? std::move(buffer_) : std::vector<char>{};
}

}  // namespace kerascpp::io
