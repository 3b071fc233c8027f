// Internal: kerascpp's own reader for the small subset of HDF5 that Keras (h5py with its defaults)
// writes, serving H5File / H5Group / H5Dataset without libhdf5 (design.md §3). It parses a byte
// buffer in place (a file read whole, or an in-memory image such as a .keras member):
//   superblock v0/v1 with 8-byte offsets and lengths; version-1 object headers (continuations
//   included); symbol-table groups (v1 B-tree, symbol nodes, local heap); attributes v1-3 with
//   fixed or variable-length strings (global heap) and any other type described; datasets with a
//   version-3 contiguous or compact layout, or none allocated (zero fill).
// File::parse walks the whole structure once and returns nullptr (with the reason) for anything
// valid but outside the subset: version-2 headers, new-style groups (link messages), soft links,
// filters or chunks, shared or big-endian datatypes, ... H5File then falls back to libhdf5. Before
// it does, the walk goes on past each such object, and every variable-length string attribute read
// is resolved, so that damage in any part this reader understands is refused here: libhdf5 trusts
// the file. Damage (bad signatures, offsets past the end, cycles) throws IOError naming the file
// and the HDF5 path. Every read is bounds-checked; nothing is allocated beyond what the buffer can hold.
// Variable-length strings are resolved lazily, when an attribute is read.
//
//   std::string why;
//   std::unique_ptr<const kh5::File> f = kh5::File::parse(data, size, "model.h5", &why);
//   if (!f) { /* libhdf5 */ }
//   const kh5::Object* w = f->find(f->root(), "model_weights/dense");
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/hdf5/hdf5_common.h"
#include "io/hdf5/hdf5_file.h"
#include "kerascpp/dtype.h"

namespace kerascpp::io::detail::kh5 {

// A datatype message, as far as kerascpp needs it.
struct Type {
  uint8_t cls = 0;            // HDF5 class: 0 integer, 1 float, 3 string, 5 opaque, 8 enum, 9 vlen...
  uint32_t size = 0;          // bytes per element in the file
  bool is_signed = false;     // integers
  bool ieee_half = false;     // a 2-byte float laid out as IEEE binary16
  bool vlen_string = false;   // class 9 holding a string
  bool bool_enum = false;     // h5py's bool: a 1-byte enum {FALSE = 0, TRUE = 1}
  bool foreign = false;       // big-endian or non-IEEE numbers: libhdf5 converts them
  uint8_t pad = 0;            // fixed strings: 0 NULLTERM, 1 NULLPAD, 2 SPACEPAD
};

struct Space {
  bool null = false;            // H5S_NULL: no elements
  std::vector<uint64_t> dims;   // empty for scalar and null
  uint64_t points = 1;          // saturates at UINT64_MAX
};

struct Attr {
  std::string_view name;  // inside the file buffer, as every name here
  Type type;
  Space space;
  const char* data = nullptr;  // points x type.size bytes inside the file buffer
};

struct Object {
  enum class Kind : uint8_t { group, dataset } kind = Kind::group;
  enum class Storage : uint8_t { contiguous, compact, none } storage = Storage::none;
  std::vector<std::pair<std::string_view, uint32_t>> members;  // group: name -> object, stored order
  bool sorted = true;                                      // members strictly name-sorted
  std::vector<Attr> attrs;                                 // sorted by name
  Type type;                                               // dataset
  Space space;                                             // dataset
  uint64_t addr = 0;    // contiguous: file address; compact: offset of the data in the buffer
  uint64_t stored = 0;  // bytes stored

  const Attr* attr(std::string_view name) const;
  const Object* member(std::string_view name, const std::vector<Object>& all) const;
};

// Global heap collections read for attribute strings, by address: each is walked once.
struct HeapCollection {
  uint64_t bytes = 0;                                      // of the collection
  std::vector<std::pair<const char*, uint64_t>> objects;  // by heap object index: data, length
};
struct HeapCache {
  std::unordered_map<uint64_t, HeapCollection> collections;
  uint64_t bytes = 0;  // of all of them, at most the file's
};

class File {
 public:
  // nullptr with *why set when the file is valid HDF5 outside the subset (or not HDF5 at all:
  // libhdf5 then says so); IOError naming `name` when it is damaged or truncated. `unread`: a member
  // of the root group left out of the walk, as if the file had none (a load with compile=False and
  // the optimizer's part of the file: about half of a small model's objects).
  static std::unique_ptr<const File> parse(const char* data, size_t size, const std::string& name,
                                           std::string* why, std::string_view unread = {});

  const Object& root() const { return objects_[0]; }
  // What `rel` ('/'-separated, may start at the root with '/') names under `from`, or nullptr when
  // a component is missing or an intermediate one is not a group.
  const Object* find(const Object& from, std::string_view rel) const;
  // An attribute's strings, with the contract of detail::read_strings.
  // out == nullptr checks every reference without reading the strings; `heaps` carries the
  // collections from one call to the next (nullptr: the file's own cache, so that the string
  // attributes a load reads, model_config, layer_names and each layer's weight_names, walk each
  // collection once between them; thread-safe).
  StringsRead read_strings(const Attr& a, std::vector<std::string>* out, std::string* why,
                           HeapCache* heaps = nullptr) const;
  // A dataset's dtype, or nullopt with *why describing the type (as detail::dtype_of).
  std::optional<DType> dtype_of(const Object& dataset, std::string* why) const;
  // Copies the dataset's nbytes bytes to dst; "" or why it cannot (damaged file).
  std::string read(const Object& dataset, void* dst, size_t nbytes) const;
  // Where a contiguous dataset's nbytes bytes lie in the buffer; nullptr when it is not contiguous
  // (*why empty) or its bytes are not all in the file (*why says so).
  const char* bytes(const Object& dataset, size_t nbytes, std::string* why) const;

  // "" when the dataset's stored bytes cover nbytes inside the file, else why not.
  std::string stored_ok(const Object& dataset, size_t nbytes) const;

  const char* data_ = nullptr;
  uint64_t size_ = 0;  // the stored end of file (no larger than the buffer)
  std::vector<Object> objects_;  // [0] is the root group

 private:
  mutable std::mutex heaps_mutex_;  // guards heaps_
  mutable HeapCache heaps_;         // read_strings' collections, filled as attributes are read
};

// "a 4-byte float", ... worded as detail::describe_type.
std::string describe(const Type& t);

}  // namespace kerascpp::io::detail::kh5

namespace kerascpp::io::detail {
// H5File::open_image through libhdf5 alone, whatever the file holds (for tests and benchmarks).
H5File open_image_libhdf5(const void* data, size_t size, std::string display_name,
                          std::shared_ptr<const void> keepalive = {});
}  // namespace kerascpp::io::detail
