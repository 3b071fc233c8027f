#include "io/mapping/file_mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
    Ptr m = map(fd, static_cast<size_t>(st.st_size), path, writable);
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
  return Ptr(new FileMapping(static_cast<char*>(p), size, writable));
}

FileMapping::~FileMapping() { ::munmap(data_, size_); }

}  // namespace kerascpp::io
