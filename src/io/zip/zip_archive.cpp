#include "io/zip/zip_archive.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "io/mapping/file_mapping.h"
#include "io/zip/zip_format.h"
#include "kerascpp/error.h"
#include "kerascpp/tensor.h"

namespace kerascpp::io {
namespace {

using namespace zipfmt;

const char* method_name(uint16_t m) {
  switch (m) {
    case 9: return " (deflate64)";
    case 12: return " (bzip2)";
    case 14: return " (lzma)";
    case 93: return " (zstandard)";
    case 95: return " (xz)";
    default: return "";
  }
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// Raw DEFLATE (no zlib header) from src into exactly `size` bytes at dst.
bool inflate_all(const char* src, size_t csize, char* dst, size_t size) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return false;
  const auto* in0 = reinterpret_cast<const Bytef*>(src);
  auto* out0 = reinterpret_cast<Bytef*>(dst);
  zs.next_in = const_cast<Bytef*>(in0);
  zs.next_out = out0;
  constexpr size_t kChunk = 1u << 30;  // avail_in / avail_out are 32-bit
  int rc = Z_OK;
  while (rc == Z_OK) {
    size_t in_used = static_cast<size_t>(zs.next_in - in0);
    size_t out_used = static_cast<size_t>(zs.next_out - out0);
    zs.avail_in = static_cast<uInt>(std::min(csize - in_used, kChunk));
    zs.avail_out = static_cast<uInt>(std::min(size - out_used, kChunk));
    rc = inflate(&zs, Z_NO_FLUSH);
  }
  bool ok = rc == Z_STREAM_END && static_cast<size_t>(zs.next_out - out0) == size;
  inflateEnd(&zs);
  return ok;
}

}  // namespace

ZipArchive::ZipArchive(const char* data, size_t size, std::string name,
                       std::shared_ptr<const void> keepalive)
    : data_(data), size_(size), name_(std::move(name)), keepalive_(std::move(keepalive)) {
  parse();
}

ZipArchive ZipArchive::open(const std::string& path, bool views) {
  return open(FileMapping::open(path, "a zip archive", views), path);
}

ZipArchive ZipArchive::open(FileMapping::Ptr mapping, const std::string& path) {
  ZipArchive zip(mapping->data(), mapping->size(), path, mapping);
  zip.mapping_ = std::move(mapping);
  return zip;
}

ZipArchive ZipArchive::from_memory(const void* data, size_t size, std::string display_name,
                                   std::shared_ptr<const void> keepalive) {
  if (data == nullptr || size == 0)
    KCPP_THROW(IOError, "Unable to open \"", display_name, "\" as a zip archive: it is empty");
  return ZipArchive(static_cast<const char*>(data), size, std::move(display_name),
                    std::move(keepalive));
}

void ZipArchive::parse() {
  auto bad = [&](const auto&... what) {
    KCPP_THROW(IOError, "Invalid zip archive \"", name_, "\": ", what...);
  };
  if (size_ < kEndSize) bad("only ", size_, " bytes, too short for a zip archive");
  // The end record sits at the end, followed by a comment of up to 65535 bytes: search backwards.
  size_t lowest = size_ > kEndSize + 0xffff ? size_ - kEndSize - 0xffff : 0;
  size_t eocd = SIZE_MAX;
  for (size_t pos = size_ - kEndSize + 1; pos-- > lowest;) {
    if (get32(data_ + pos) == kEndSig && pos + kEndSize + get16(data_ + pos + 20) <= size_) {
      eocd = pos;
      break;
    }
  }
  if (eocd == SIZE_MAX) bad("no end of central directory record (not a zip file, or truncated)");
  const char* e = data_ + eocd;
  uint64_t disk = get16(e + 4), cd_disk = get16(e + 6), count_here = get16(e + 8);
  uint64_t count = get16(e + 10), cd_size = get32(e + 12), cd_offset = get32(e + 16);
  if (eocd >= kEnd64LocatorSize && get32(e - kEnd64LocatorSize) == kEnd64LocatorSig) {
    const char* loc = e - kEnd64LocatorSize;
    uint64_t rec = get64(loc + 8);
    if (get32(loc + 16) > 1) bad("multi-disk archives are not supported");
    if (rec > eocd - kEnd64LocatorSize || eocd - kEnd64LocatorSize - rec < kEnd64Size)
      bad("the ZIP64 end record at offset ", rec, " is out of bounds");
    const char* r = data_ + rec;
    if (get32(r) != kEnd64Sig) bad("bad ZIP64 end record signature at offset ", rec);
    disk = get32(r + 16);
    cd_disk = get32(r + 20);
    count_here = get64(r + 24);
    count = get64(r + 32);
    cd_size = get64(r + 40);
    cd_offset = get64(r + 48);
  }
  if (disk != 0 || cd_disk != 0 || count_here != count) bad("multi-disk archives are not supported");
  if (cd_offset > size_ || cd_size > size_ - cd_offset)
    bad("the central directory (", cd_size, " bytes at offset ", cd_offset,
        ") lies outside the file of ", size_, " bytes (truncated?)");
  if (count > cd_size / kCentralSize)
    bad(count, " entries cannot fit in a central directory of ", cd_size, " bytes");
  entries_.reserve(count);
  const char* p = data_ + cd_offset;
  const char* end = p + cd_size;
  for (uint64_t i = 0; i < count; ++i) {
    if (static_cast<size_t>(end - p) < kCentralSize || get32(p) != kCentralSig)
      bad("central directory entry #", i, " is damaged");
    ZipEntry z;
    z.flags = get16(p + 8);
    z.method = get16(p + 10);
    z.crc32 = get32(p + 16);
    z.compressed_size = get32(p + 20);
    z.size = get32(p + 24);
    size_t name_len = get16(p + 28), extra_len = get16(p + 30), comment_len = get16(p + 32);
    z.local_header_offset = get32(p + 42);
    if (kCentralSize + name_len + extra_len + comment_len > static_cast<size_t>(end - p))
      bad("central directory entry #", i, " runs past the directory");
    z.name.assign(p + kCentralSize, name_len);
    // ZIP64 extra field: 64-bit values for exactly the fields that hold 0xffffffff, in this order.
    const char* x = p + kCentralSize + name_len;
    const char* x_end = x + extra_len;
    while (x_end - x >= 4) {
      uint16_t id = get16(x), len = get16(x + 2);
      if (len > x_end - x - 4) bad("the extra field of member \"", z.name, "\" is damaged");
      if (id == kZip64ExtraId) {
        const char* v = x + 4;
        const char* v_end = v + len;
        for (uint64_t* field : {&z.size, &z.compressed_size, &z.local_header_offset}) {
          if (*field != 0xffffffffu) continue;
          if (v_end - v < 8) bad("the ZIP64 extra field of member \"", z.name, "\" is too short");
          *field = get64(v);
          v += 8;
        }
      }
      x += 4 + len;
    }
    p += kCentralSize + name_len + extra_len + comment_len;
    index_[z.name] = entries_.size();
    entries_.push_back(std::move(z));
  }
}

std::vector<std::string> ZipArchive::names() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const ZipEntry& e : entries_) out.push_back(e.name);
  return out;
}

bool ZipArchive::has(std::string_view member) const {
  return index_.count(std::string(member)) > 0;
}

const ZipEntry& ZipArchive::entry(std::string_view member) const {
  auto it = index_.find(std::string(member));
  if (it == index_.end()) {
    std::string list;
    for (size_t i = 0; i < entries_.size() && i < 20; ++i) list += (i ? ", " : "") + entries_[i].name;
    if (entries_.size() > 20) list += ", ...";
    KCPP_THROW(IOError, "There is no member \"", member, "\" in zip archive \"", name_,
               "\"; its members are [", list, "]");
  }
  return entries_[it->second];
}

// Where the member's stored bytes are: its local header and its data inside the file, a stored
// member's two sizes equal, a method kerascpp reads. IOError naming the member otherwise.
const char* ZipArchive::data_of(const ZipEntry& e) const {
  auto bad = [&](const auto&... what) {
    KCPP_THROW(IOError, "Unable to read member \"", e.name, "\" of zip archive \"", name_, "\": ", what...);
  };
  if (e.flags & kFlagEncrypted) bad("it is encrypted");
  uint64_t off = e.local_header_offset;
  if (off > size_ || size_ - off < kLocalSize)
    bad("its local header at offset ", off, " lies outside the file of ", size_, " bytes");
  const char* local = data_ + off;
  if (get32(local) != kLocalSig) bad("bad local header signature at offset ", off);
  // The data follows the local header, whose extra field may differ from the central one.
  uint64_t start = off + kLocalSize + get16(local + 26) + get16(local + 28);
  if (start > size_ || e.compressed_size > size_ - start)
    bad("its data (", e.compressed_size, " bytes at offset ", start, ") lies outside the file of ",
        size_, " bytes (truncated?)");
  if (e.method == kStored && e.compressed_size != e.size)
    bad("stored member with compressed size ", e.compressed_size, " != size ", e.size);
  if (e.method != kStored && e.method != kDeflated)
    bad("unsupported compression method ", e.method, method_name(e.method),
        "; only stored (0) and deflate (8) are supported");
  return data_ + start;
}

ZipMember ZipArchive::member(std::string_view member, bool verify_crc) const {
  const ZipEntry& e = entry(member);
  const uint64_t size = checked_size(member);  // the limits, and where the bytes are
  const char* src = data_of(e);
  ZipMember m;
  if (e.method == kStored) {
    m = ZipMember{src, static_cast<size_t>(size), keepalive_, mapping_};
  } else {
    std::shared_ptr<Storage> buf = Storage::allocate(static_cast<size_t>(size));
    if (!inflate_all(src, e.compressed_size, static_cast<char*>(buf->data()), size))
      KCPP_THROW(IOError, "Unable to read member \"", member, "\" of zip archive \"", name_, "\": corrupt DEFLATE data");
    m = ZipMember{static_cast<const char*>(buf->data()), static_cast<size_t>(size), buf, nullptr};
  }
  if (verify_crc) {
    uint32_t crc = static_cast<uint32_t>(
        crc32_z(0, reinterpret_cast<const Bytef*>(m.data), static_cast<z_size_t>(m.size)));
    if (crc != e.crc32)
      KCPP_THROW(IOError, "Unable to read member \"", member, "\" of zip archive \"", name_, "\": CRC-32 mismatch: stored ",
                 hex32(e.crc32), ", computed ", hex32(crc));
  }
  return m;
}

uint64_t ZipArchive::checked_size(std::string_view member) const {
  const ZipEntry& e = entry(member);
  data_of(e);  // the declared sizes are held to the bytes the file has first
  auto refuse = [&](const auto&... what) {
    KCPP_THROW(ValueError, "The member \"", member, "\" of zip archive \"", name_, "\" ", what...);
  };
  if (e.size > limits_.max_member_bytes)
    refuse("declares ", e.size, " bytes, over the limit of ", limits_.max_member_bytes,
           " (LoadLimits::max_member_bytes)");
  if (e.method != kDeflated) return e.size;
  // DEFLATE expands at most ~1032:1; anything more is damage.
  if (e.size / 1032 > e.compressed_size + 1)
    KCPP_THROW(IOError, "Unable to read member \"", member, "\" of zip archive \"", name_, "\": implausible size ",
               e.size, " from ", e.compressed_size, " compressed bytes (damaged?)");
  const double ratio = static_cast<double>(e.size) / static_cast<double>(std::max<uint64_t>(e.compressed_size, 1));
  if (limits_.max_compression_ratio > 0 && e.size > ZipLimits::kRatioFloor && ratio > limits_.max_compression_ratio)
    refuse("inflates ", e.compressed_size, " bytes to ", e.size, " (a compression ratio of ", static_cast<int64_t>(ratio),
           "), over the limit of ", limits_.max_compression_ratio, " (LoadLimits::max_compression_ratio)");
  return e.size;
}

}  // namespace kerascpp::io
