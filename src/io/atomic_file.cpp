#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "kerascpp/error.h"

namespace kerascpp::io {

namespace {
std::string reason(int err) {
  if (err == ENOSPC || err == EFBIG || err == EDQUOT) return std::string(std::strerror(err)) + " (the disk is full?)";
  return std::strerror(err);
}
}  // namespace

void write_file_atomically(const std::string& path, const void* data, size_t size) {
  namespace fs = std::filesystem;
  KCPP_CHECK(!path.empty(), IOError, "Cannot save to an empty path");
  std::error_code ec;
  KCPP_CHECK(!fs::is_directory(path, ec), IOError, "Cannot save to ", path, ": it is a directory");
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  KCPP_CHECK(fs::is_directory(dir, ec), IOError, "Cannot save to ", path, ": the folder ", dir.string(), " does not exist");
  std::string tmp = (dir / ("." + fs::path(path).filename().string() + ".tmp-XXXXXX")).string();
  int fd = ::mkstemp(tmp.data());
  KCPP_CHECK(fd >= 0, IOError, "Cannot save to ", path, ": unable to create a file in ", dir.string(), ": ", reason(errno));
  auto fail = [&](const char* what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    KCPP_THROW(IOError, "Cannot save to ", path, ": ", what, " failed: ", reason(err), ". The previous file, if any, is untouched.");
  };
  const char* p = static_cast<const char*>(data);
  for (size_t left = size; left > 0;) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      fail("writing");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0) fail("flushing to disk");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    KCPP_THROW(IOError, "Cannot save to ", path, ": closing failed: ", reason(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    KCPP_THROW(IOError, "Cannot save to ", path, ": renaming the temporary file failed: ", reason(err));
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {  // makes the rename itself durable
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace kerascpp::io
