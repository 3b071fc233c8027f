// A whole file mapped into memory, private: how large model files are read without a copy.
//
//   FileMapping::Ptr m = FileMapping::open("model.h5");   // IOError naming the file on failure
//   H5File h5 = H5File::open_image(m->data(), m->size(), "model.h5", m);
//
// A small read-only file is read into memory of its own instead (open, kReadLimit). A mapping is
// MAP_PRIVATE, read-only unless asked `writable`: then a write through it copies
// that page for this process and never reaches the file (weights mapped by
// LoadOptions::mmap_weights train this way; MAP_NORESERVE, so the file's size is not charged to
// the commit limit up front). Pages not written yet are the page cache's: they cost no memory of
// their own and are shared with every other process that maps or reads the file. If another
// process overwrites the file in place, those pages show the new bytes; if it truncates the file,
// touching a lost page raises SIGBUS. Hence only loads whose result keeps no view of the file
// (every load but mmap_weights) map without the caller asking, and they drop the mapping before
// they return; a file truncated by another process during such a load (a writer saving in place
// over it) can still kill the loading process with SIGBUS instead of an IOError where the load
// touches the lost pages: metadata and small datasets (large ones are read with pread, copy()).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace kerascpp::io {

class FileMapping {
 public:
  using Ptr = std::shared_ptr<const FileMapping>;
  // Maps the file at `path`; a read-only one no larger than kReadLimit is read into memory instead
  // (one read costs less than mapping and unmapping a few pages: a load of the seed MLP's 28 KB
  // .keras took 180 instead of 196 us). IOError for a missing, unreadable or empty file and for a
  // directory. `what` names the kind of file in those errors ("a zip archive").
  static constexpr size_t kReadLimit = 512 << 10;
  static Ptr open(const std::string& path, const char* what, bool writable = false);
  // Maps `size` bytes of the open descriptor `fd` (the caller keeps and closes it; a read-only mapping
  // keeps a duplicate of its own for copy()).
  static Ptr map(int fd, size_t size, const std::string& path, bool writable = false);
  // Reads them into memory of its own (64-byte aligned): IOError naming the file if the read fails or
  // the file shrank meanwhile.
  static Ptr read(int fd, size_t size, const std::string& path);
  ~FileMapping();
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;

  char* data() const { return data_; }
  size_t size() const { return size_; }
  bool writable() const { return writable_; }  // private and writable (asked for, or read)

  // Copies the n bytes at p (inside the mapping) to dst. A read-only mapping reads a large span
  // with pread from the file instead of touching its pages: the copy then costs no page faults nor
  // page-table setup and teardown (ResNet50's 103 MB .h5 loaded in 35.0 instead of 37.3-38.1 ms, a
  // third of the rest being the kernel clearing the weights' fresh pages), and a file that shrank
  // meanwhile is an IOError naming it instead of SIGBUS. Smaller spans, and other mappings, memcpy.
  static constexpr size_t kPreadBytes = 64 << 10;
  void copy(const char* p, size_t n, void* dst) const;

 private:
  FileMapping(char* data, size_t size, bool writable, bool mapped, int fd = -1, std::string path = {})
      : data_(data), size_(size), writable_(writable), mapped_(mapped), fd_(fd), path_(std::move(path)) {}
  char* data_;
  size_t size_;
  bool writable_;
  bool mapped_;  // else read into memory of its own
  int fd_;       // a read-only mapping's own descriptor of the file (copy), else -1
  std::string path_;
};

}  // namespace kerascpp::io
