#include "io/mapping/file_mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kerascpp/error.h"

namespace kerascpp::io {

FileMapping::Ptr FileMapping::open(const std::string& path, const char* what, bool writable) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) KCPP_THROW(IOError, "Unable to open \"", path, "\": ", std::strerror(errno));
  struct stat st;
  int rc = ::fstat(fd, &st);
  int err = errno;
  if (rc != 0 || S_ISDIR(st.st_mode) || st.st_size == 0) {
    ::close(fd);
    if (rc != 0) KCPP_THROW(IOError, "Unable to open \"", path, "\": ", std::strerror(err));
    KCPP_THROW(IOError, "Unable to open \"", path, "\" as ", what, ": ",
               S_ISDIR(st.st_mode) ? "it is a directory" : "the file is empty");
  }
  try {
    const size_t size = static_cast<size_t>(st.st_size);
    Ptr m = size <= kReadLimit && !writable ? read(fd, size, path) : map(fd, size, path, writable);
    ::close(fd);  // the mapping stays valid without the descriptor
    return m;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

FileMapping::Ptr FileMapping::map(int fd, size_t size, const std::string& path, bool writable) {
  void* p = ::mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ,
                   writable ? MAP_PRIVATE | MAP_NORESERVE : MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) KCPP_THROW(IOError, "Unable to map \"", path, "\": ", std::strerror(errno));
  // A read-only mapping lives while a load copies from it: it keeps a descriptor for copy(). A
  // writable one (weights as views, for a model's life) keeps none.
  const int own = writable ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  try {
    return Ptr(new FileMapping(static_cast<char*>(p), size, writable, true, own, path));
  } catch (...) {
    if (own >= 0) ::close(own);
    ::munmap(p, size);
    throw;
  }
}

void FileMapping::copy(const char* p, size_t n, void* dst) const {
  KCPP_ASSERT(p >= data_ && n <= size_ && static_cast<size_t>(p - data_) <= size_ - n);
  if (fd_ < 0 || n < kPreadBytes) {
    std::memcpy(dst, p, n);
    return;
  }
  const size_t at = static_cast<size_t>(p - data_);
  char* out = static_cast<char*>(dst);
  for (size_t done = 0; done < n;) {
    ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(at + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == ESPIPE || errno == EINVAL) && done == 0) {  // mappable but not preadable
      std::memcpy(dst, p, n);
      return;
    }
    if (got < 0) KCPP_THROW(IOError, "Unable to read \"", path_, "\": ", std::strerror(errno));
    if (got == 0)
      KCPP_THROW(IOError, "Unable to read \"", path_, "\": the file shrank while being read (", n,
                 " bytes at offset ", at, " wanted, the file ends after ", at + done, ")");
    done += static_cast<size_t>(got);
  }
}

FileMapping::Ptr FileMapping::read(int fd, size_t size, const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> bytes(static_cast<char*>(std::aligned_alloc(64, (size + 63) / 64 * 64)),
                                                    &std::free);
  if (!bytes) throw std::bad_alloc();
  char* p = bytes.get();
  Ptr m(new FileMapping(p, size, true, false));
  bytes.release();  // m frees it now
  for (size_t done = 0; done < size;) {
    ssize_t n = ::pread(fd, p + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) KCPP_THROW(IOError, "Unable to read \"", path, "\": ", std::strerror(errno));
    if (n == 0)
      KCPP_THROW(IOError, "Unable to read \"", path, "\": the file shrank while being read (", done, " of ", size,
                 " bytes)");
    done += static_cast<size_t>(n);
  }
  return m;
}

FileMapping::~FileMapping() {
  if (fd_ >= 0) ::close(fd_);
  if (mapped_)
    ::munmap(data_, size_);
  else
    std::free(data_);
}

}  // namespace kerascpp::io
