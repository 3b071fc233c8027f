// Internal helpers shared by the HDF5 reader and writer: locking, handle ownership, error text and
// the mapping between kerascpp dtypes and HDF5 types. Nothing outside src/io/hdf5 includes this.
//
//   H5Lock lock;                                   // at the top of every function calling libhdf5
//   Hid space(H5Dget_space(did));                  // closed by the destructor
//   if (space.get() < 0) throw_h5<IOError>("Unable to read dataset \"", path, "\" in \"", file, "\"");
#pragma once

#include <hdf5.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kerascpp/dtype.h"
#include "io/mapping/file_mapping.h"
#include "kerascpp/error.h"

namespace kerascpp::io::detail {

namespace kh5 {  // kerascpp's reader for Keras's HDF5 subset (keras_h5_reader.h)
class File;
struct Object;
}  // namespace kh5

// Serialises libhdf5 calls when the library is not thread-safe, and silences its automatic error
// printing on the calling thread. Debian's libhdf5 1.10.8 is built thread-safe (its own global lock
// serialises calls; checked with H5is_library_threadsafe), so there the mutex is skipped. In a
// thread-safe build the error-printing switch is per thread, hence it is set once on every thread.
// Recursive because helpers that take the lock call each other.
class H5Lock {
 public:
  H5Lock();
  H5Lock(const H5Lock&) = delete;
  H5Lock& operator=(const H5Lock&) = delete;

 private:
  std::unique_lock<std::recursive_mutex> lock_;
};

// Owns one HDF5 id of any kind (file, group, dataset, attribute, type, space, property list) and
// closes it with H5Idec_ref, which works for every kind. Negative ids mean "none / failed".
class Hid {
 public:
  Hid() = default;
  explicit Hid(hid_t id) : id_(id) {}
  Hid(Hid&& o) noexcept : id_(o.id_) { o.id_ = -1; }
  Hid& operator=(Hid&& o) noexcept;
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  ~Hid() { reset(); }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  void reset();
  hid_t release() {  // hands the id over without closing it
    hid_t id = id_;
    id_ = -1;
    return id;
  }

 private:
  hid_t id_ = -1;
};

// An open HDF5 file, shared by its H5File and every group / dataset taken from it.
struct H5FileState {
  std::shared_ptr<const void> keepalive;  // first, so it is released after the file is closed
  Hid file;
  std::string name;   // display name for errors
  uint64_t size = 0;  // bytes on disk / in the image, to refuse implausible shapes in damaged files
  std::shared_ptr<const kh5::File> fast;  // set when kerascpp's reader serves the file, not libhdf5
  FileMapping::Ptr mapping;  // set when the image lies in a private file mapping
};

// One open group or dataset. `file` is declared first so that `id` is closed before the file.
struct H5Node {
  std::shared_ptr<const H5FileState> file;
  Hid id;
  std::string path;
  Hid type;  // a dataset's file type, kept for reading
  const kh5::Object* obj = nullptr;  // with file->fast: the group or dataset (ids unused)
};

// "[a, b, c]", shortened after `max` names, for error messages.
std::string name_list(const std::vector<std::string>& names, size_t max = 20);

// The most specific message on the calling thread's HDF5 error stack (e.g. "truncated file: eof =
// 1000, ..."), then clears the stack. Empty when libhdf5 reported nothing.
std::string h5_error_text();

// Throws Type with the concatenated message plus ": <libhdf5's reason>" when there is one.
template <typename Type, typename... Args>
[[noreturn]] void throw_h5(const Args&... args) {
  std::string reason = h5_error_text();
  std::string msg = ::kerascpp::detail::concat(args...);
  if (!reason.empty()) msg += ": " + reason;
  throw Type(msg);
}

// `parent` + "/" + `rel` without doubled or trailing slashes; the root is "/".
std::string join_path(const std::string& parent, std::string_view rel);

// The kerascpp dtype of an HDF5 type, or nullopt with a description of the type in *why.
// `obj` is the dataset, consulted for the bfloat16 marker attribute dtype="bfloat16".
std::optional<DType> dtype_of(hid_t type, hid_t obj, std::string* why);

// The in-memory type to read `file_type` into as `dtype`: native byte order, so libhdf5 converts
// big-endian data; identical to a little-endian file type, so such data is read without conversion.
// A type made for the occasion is handed to *owned.
hid_t memory_type(DType dtype, hid_t file_type, Hid* owned);

// The type kerascpp writes for `dtype`, matching what h5py writes.
Hid file_type(DType dtype);

// Reads a string or string-array attribute into *out (a scalar gives one element; a zero-length
// numeric array, Keras's empty list, gives none). Otherwise *why says what was found instead, or
// why it could not be read (including more strings than a file of file_size bytes can hold).
enum class StringsRead { ok, not_strings, damaged };
StringsRead read_strings(hid_t attr, uint64_t file_size, std::vector<std::string>* out,
                         std::string* why);

// "a 2-byte float", "a 4-byte signed integer", ... for error messages.
std::string describe_type(hid_t type);

}  // namespace kerascpp::io::detail
