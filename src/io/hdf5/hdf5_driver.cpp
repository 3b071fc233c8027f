#include "io/hdf5/hdf5_driver.h"

#include "io/hdf5/hdf5_common.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <tuple>
#include <vector>

namespace kerascpp::io::detail {
namespace {

// What H5Pset_driver hands to open(): an image, or nullptr for the file named in H5Fopen.
struct Info {
  const char* data;
  size_t size;
};

struct File {
  H5FD_t pub;  // first: libhdf5 passes File* around as H5FD_t*
  const char* data;
  int fd;
  dev_t dev;
  ino_t ino;
  haddr_t eoa;
  haddr_t eof;
};

constexpr haddr_t kMaxAddr = (haddr_t{1} << 62) - 1;
constexpr size_t kHeapHeader = 16;  // "GCOL", version, 3 reserved, 8-byte collection size
constexpr size_t kObjectHeader = 16;  // index (2), refcount (2), reserved (4), size (8)

uint64_t get64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}

template <typename... Args>
void push_error(const char* func, hid_t minor, const char* fmt, Args... args) {
  H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, H5E_ERR_CLS, H5E_VFL, minor, fmt, args...);
}

bool read_at(const File* f, haddr_t addr, size_t size, char* out) {
  size_t avail = addr >= f->eof ? 0 : static_cast<size_t>(std::min<haddr_t>(size, f->eof - addr));
  if (f->data) {
    std::memcpy(out, f->data + addr, avail);
  } else {
    size_t done = 0;
    while (done < avail) {
      ssize_t n = ::pread(f->fd, out + done, avail - done, static_cast<off_t>(addr + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return false;
      if (n == 0) break;  // the file shrank: the rest reads as zeros, as past the end
      done += static_cast<size_t>(n);
    }
    avail = done;
  }
  std::memset(out + avail, 0, size - avail);  // past the end of the file reads as zeros (sec2)
  return true;
}

H5FD_t* drv_open(const char* name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
  if (flags & (H5F_ACC_RDWR | H5F_ACC_CREAT | H5F_ACC_TRUNC)) {
    push_error(__func__, H5E_BADVALUE, "kerascpp's driver is read-only (flags %u)", flags);
    return nullptr;
  }
  const auto* info = static_cast<const Info*>(H5Pget_driver_info(fapl));
  File* f = new (std::nothrow) File{};
  if (!info || !f) {
    delete f;
    push_error(__func__, H5E_CANTOPENFILE, "no driver info");
    return nullptr;
  }
  f->fd = -1;
  if (info->data) {
    f->data = info->data;
    f->eof = info->size;
    return &f->pub;
  }
  struct stat st;
  f->fd = ::open(name, O_RDONLY | O_CLOEXEC);
  if (f->fd < 0 || ::fstat(f->fd, &st) != 0) {
    const char* why = std::strerror(errno);
    push_error(__func__, H5E_CANTOPENFILE, "%s", why);
    if (f->fd >= 0) ::close(f->fd);
    delete f;
    return nullptr;
  }
  f->dev = st.st_dev;
  f->ino = st.st_ino;
  f->eof = static_cast<haddr_t>(st.st_size);
  return &f->pub;
}

herr_t drv_close(H5FD_t* pub) {
  File* f = reinterpret_cast<File*>(pub);
  if (f->fd >= 0) ::close(f->fd);
  delete f;
  return 0;
}

// libhdf5 shares one open file among opens that compare equal: same image bytes, or same inode
// and size.
int drv_cmp(const H5FD_t* a, const H5FD_t* b) {
  const File* x = reinterpret_cast<const File*>(a);
  const File* y = reinterpret_cast<const File*>(b);
  auto key = [](const File* f) {
    return std::make_tuple(reinterpret_cast<uintptr_t>(f->data), f->eof, f->dev, f->ino);
  };
  return key(x) < key(y) ? -1 : key(y) < key(x) ? 1 : 0;
}

herr_t drv_query(const H5FD_t*, unsigned long* flags) {
  // No DATA_SIEVE: whole datasets are read straight into the caller's buffer, not via a sieve.
  *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA |
           H5FD_FEAT_AGGREGATE_SMALLDATA;
  return 0;
}

haddr_t drv_get_eoa(const H5FD_t* pub, H5FD_mem_t) {
  return reinterpret_cast<const File*>(pub)->eoa;
}

herr_t drv_set_eoa(H5FD_t* pub, H5FD_mem_t, haddr_t addr) {
  reinterpret_cast<File*>(pub)->eoa = addr;
  return 0;
}

haddr_t drv_get_eof(const H5FD_t* pub, H5FD_mem_t) {
  return reinterpret_cast<const File*>(pub)->eof;
}

herr_t drv_get_handle(H5FD_t* pub, hid_t, void** handle) {
  File* f = reinterpret_cast<File*>(pub);
  *handle = f->data ? const_cast<char*>(f->data) : static_cast<void*>(&f->fd);
  return 0;
}

// A read that starts a global heap collection: check the whole collection (libhdf5 reads the
// first 4 KB, then the rest separately) before libhdf5 parses it.
bool heap_checked(const File* f, haddr_t addr, const char* first, size_t n) {
  if (n < kHeapHeader || std::memcmp(first, "GCOL\1", 5) != 0) return true;
  uint64_t total = get64(first + 8);
  if (total < kHeapHeader || addr > f->eof || total > f->eof - addr) return false;
  if (total <= n) return heap_collection_ok(first, total);
  if (f->data) return heap_collection_ok(f->data + addr, total);
  std::vector<char> whole(total);
  return read_at(f, addr, total, whole.data()) && heap_collection_ok(whole.data(), total);
}

herr_t drv_read(H5FD_t* pub, H5FD_mem_t, hid_t, haddr_t addr, size_t size, void* buf) {
  File* f = reinterpret_cast<File*>(pub);
  if (addr == HADDR_UNDEF || addr + size < addr || addr + size > f->eoa) {
    push_error(__func__, H5E_OVERFLOW, "read of %zu bytes at address %llu past the end of the file",
               size, static_cast<unsigned long long>(addr));
    return -1;
  }
  char* out = static_cast<char*>(buf);
  if (!read_at(f, addr, size, out)) {
    const char* why = std::strerror(errno);
    push_error(__func__, H5E_READERROR, "%s", why);
    return -1;
  }
  if (!heap_checked(f, addr, out, size)) {
    push_error(__func__, H5E_READERROR, "damaged global heap collection at address %llu",
               static_cast<unsigned long long>(addr));
    return -1;
  }
  return 0;
}

herr_t drv_write(H5FD_t*, H5FD_mem_t, hid_t, haddr_t addr, size_t, const void*) {
  push_error(__func__, H5E_BADVALUE, "kerascpp's driver is read-only (write at %llu)",
             static_cast<unsigned long long>(addr));
  return -1;
}

// Unnamed callbacks stay null: libhdf5 then uses its defaults (or, for flush/lock, nothing).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const H5FD_class_t kDriver = {
#if H5_VERSION_GE(1, 13, 0)
    .version = H5FD_CLASS_VERSION,
    .value = static_cast<H5FD_class_value_t>(600),
#endif
    .name = "kerascpp",
    .maxaddr = kMaxAddr,
    .fc_degree = H5F_CLOSE_WEAK,
    .fapl_size = sizeof(Info),
    .open = drv_open,
    .close = drv_close,
    .cmp = drv_cmp,
    .query = drv_query,
    .get_eoa = drv_get_eoa,
    .set_eoa = drv_set_eoa,
    .get_eof = drv_get_eof,
    .get_handle = drv_get_handle,
    .read = drv_read,
    .write = drv_write,
    .fl_map = H5FD_FLMAP_DICHOTOMY,
};
#pragma GCC diagnostic pop

}  // namespace

bool heap_collection_ok(const char* p, size_t n) {
  if (n < kHeapHeader || std::memcmp(p, "GCOL\1", 5) != 0 || get64(p + 8) != n) return true;
  // Mirrors H5HG__cache_heap_deserialize: objects follow each other; index 0 is free space.
  size_t at = kHeapHeader;
  while (n - at >= kObjectHeader) {
    uint16_t index = static_cast<uint16_t>(static_cast<uint8_t>(p[at]) | static_cast<uint8_t>(p[at + 1]) << 8);
    uint64_t size = get64(p + at + 8);
    if (size > n - at) return false;
    uint64_t need = index ? kObjectHeader + ((size + 7) & ~uint64_t{7}) : size;
    if (need == 0 || need > n - at) return false;
    at += need;
  }
  return true;
}

hid_t open_with_driver(const char* name, const void* data, size_t size, std::string* error) {
  static const hid_t driver = H5FDregister(&kDriver);  // once; the library unregisters at exit
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS));
  Info info{static_cast<const char*>(data), size};
  hid_t fid = -1;
  if (driver >= 0 && fapl.ok() && H5Pset_driver(fapl.get(), driver, &info) >= 0)
    fid = H5Fopen(name, H5F_ACC_RDONLY, fapl.get());
  if (fid < 0) *error = h5_error_text();  // before closing fapl: every API call clears the stack
  return fid;
}

}  // namespace kerascpp::io::detail
