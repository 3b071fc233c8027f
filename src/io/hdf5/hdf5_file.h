// Reading HDF5 files: the one interface through which kerascpp reads HDF5 (legacy .h5 models,
// .weights.h5, the weights member of a .keras archive). Two backends serve it: kerascpp's own
// reader for the subset of HDF5 that Keras writes (keras_h5_reader.h: small files read whole, large
// ones mapped, images), and libhdf5 for every other HDF5 feature (and for files read on demand,
// H5Driver::on_demand). The choice is made when the file is opened and is invisible to callers
// (H5File::backend() tells it).
//
//   H5File file = H5File::open("model.h5");
//   std::string config = file.root().attr_string("model_config");
//   H5Group weights = file.root().group("model_weights");
//   for (const std::string& layer : weights.attr_strings_split("layer_names")) { ... }
//   Tensor kernel = weights.dataset("dense/dense/kernel:0").read();   // (in, units) float32
//
// Groups and datasets keep their file open: the file (and an in-memory image's keepalive) is
// released when the H5File and every H5Group / H5Dataset taken from it are gone. All classes are
// cheap to copy and safe to use from several threads at once. Errors name the file and the HDF5
// path: IOError for a missing, foreign, truncated or damaged file; ValueError for a missing or
// wrong-kind group / dataset / attribute; NotImplementedError for a dtype kerascpp lacks.
// kerascpp's reader bounds-checks every read. A file outside the subset is first walked by it as
// far as it understands the file, refusing damage there (link names, heaps, global heap references);
// then libhdf5 reads it, which trusts the rest (fuzzing found crashes inside libhdf5 1.10 on damaged
// files). allow_libhdf5 = false (LoadLimits::allow_libhdf5, for files from untrusted sources) keeps
// libhdf5 out: every file is read (or mapped) whole by kerascpp's reader, and one outside the subset is refused.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/mapping/file_mapping.h"
#include "kerascpp/tensor.h"

namespace kerascpp::io {

namespace detail {
struct H5Node;
class Hid;
}

// How H5File::open reads a file from disk (measurements in hdf5_file.cpp).
enum class H5Driver {
  automatic,   // whole_read up to 512 KiB, mapped above
  on_demand,   // kerascpp's driver reading with pread as libhdf5 asks: metadata in many small
               // reads, each dataset straight into its tensor
  whole_read,  // one read() into an aligned buffer, then opened in place as an image
  mapped,      // the file mapped read-only (io/mapping/file_mapping.h) and opened in place as an
               // image: datasets are copied from the page cache
  mapped_views,  // mapped private and writable: datasets can also be views (H5Dataset::view)
  sec2,        // libhdf5's POSIX driver and
  core,        // libhdf5's in-memory driver: for comparison only, they do not check heaps
};

// What groups and datasets share: a path inside a file and attributes.
class H5Object {
 public:
  const std::string& path() const;       // "/" for the root, else "a/b" (no leading slash)
  const std::string& file_name() const;  // the display name used in errors

  bool has_attr(std::string_view name) const;
  std::vector<std::string> attr_names() const;
  // A scalar (or 1-element) string attribute, vlen or fixed-length, ASCII- or UTF-8-tagged, as
  // UTF-8 bytes.
  std::string attr_string(std::string_view name) const;
  // A string array (fixed-length NULLPAD with trailing NULs stripped, or vlen). A zero-length
  // numeric array (Keras's empty list) gives {}; a scalar string gives one element.
  std::vector<std::string> attr_strings(std::string_view name) const;
  // Keras's 64 KB split (keras-format.md §1.5): `name` if present, else `name0`, `name1`, ...
  // concatenated until one is missing. Throws ValueError when neither `name` nor `name0` exists.
  std::vector<std::string> attr_strings_split(std::string_view name) const;

 protected:
  H5Object() = default;
  std::vector<std::string> read_attr_strings(std::string_view name, detail::Hid attr) const;
  explicit H5Object(std::shared_ptr<const detail::H5Node> node) : node_(std::move(node)) {}
  std::shared_ptr<const detail::H5Node> node_;
};

class H5Dataset : public H5Object {
 public:
  H5Dataset() = default;  // an empty handle, to be assigned
  const Shape& shape() const { return shape_; }  // {} for a scalar dataspace
  // float32/64/16, int8/32/64, uint8, bool (h5py's enum) or bfloat16 (Keras's 2-byte opaque with
  // attribute dtype="bfloat16"); throws NotImplementedError for any other HDF5 type.
  DType dtype() const;
  size_t nbytes() const;  // shape size x dtype size
  // Reads the whole dataset into dst, converting big-endian data to native order. Contiguous
  // little-endian data goes straight from the file into dst. nbytes must equal this->nbytes().
  void read_into(void* dst, size_t nbytes) const;
  Tensor read() const;
  // The dataset as a tensor over the file's own bytes, no copy, when it can be one: the file was
  // opened from a writable private mapping (H5Driver::mapped_views, H5File::open_mapped) and read by kerascpp's
  // reader, the data is stored contiguous, little-endian in its dtype's own layout (no
  // conversion) and aligned to its element size. Else an undefined tensor: read() it instead.
  // Writes to the tensor copy the pages they touch and never reach the file (file_mapping.h).
  Tensor view() const;

 private:
  friend class H5Group;
  H5Dataset(std::shared_ptr<const detail::H5Node> node, Shape shape, bool dtype_ok, DType dtype,
            std::string type_text)
      : H5Object(std::move(node)), shape_(std::move(shape)), dtype_ok_(dtype_ok), dtype_(dtype),
        type_text_(std::move(type_text)) {}
  Shape shape_;
  bool dtype_ok_ = false;
  DType dtype_ = DType::float32;
  std::string type_text_;  // what the HDF5 type is, for the error when dtype_ok_ is false
};

class H5Group : public H5Object {
 public:
  H5Group() = default;  // an empty handle, to be assigned
  // rel may contain '/'; has / is_group / is_dataset never throw for missing intermediate groups.
  bool has(std::string_view rel) const;
  bool is_group(std::string_view rel) const;
  bool is_dataset(std::string_view rel) const;
  H5Group group(std::string_view rel) const;
  H5Dataset dataset(std::string_view rel) const;
  // Member names in stored order (alphabetical, as Keras files keep them in a name-sorted B-tree).
  std::vector<std::string> members() const;

 private:
  friend class H5File;
  explicit H5Group(std::shared_ptr<const detail::H5Node> node) : H5Object(std::move(node)) {}
  [[noreturn]] void throw_missing(std::string_view rel, const char* kind) const;
};

class H5File {
 public:
  // allow_libhdf5 = false reads the file whole (whatever the driver) with kerascpp's reader alone.
  // `unread`: a member of the root group that kerascpp's reader neither walks nor lists (a load with
  // compile=False and the optimizer's group: see kh5::File::parse); libhdf5, which reads on demand,
  // still lists it where the file goes there.
  static H5File open(const std::string& path, H5Driver driver = H5Driver::automatic,
                     bool allow_libhdf5 = true, std::string_view unread = {});
  // The file at `path` as FileMapping::read read it (what open does with a small file): parsed in
  // the bytes, which it keeps.
  static H5File open(FileMapping::Ptr bytes, const std::string& path, bool allow_libhdf5 = true,
                     std::string_view unread = {});
  // An HDF5 file image in memory, read in place (read-only, no copy). The bytes must stay valid
  // while the file or anything taken from it is alive: pass `keepalive` to tie them to it.
  static H5File open_image(const void* data, size_t size, std::string display_name,
                           std::shared_ptr<const void> keepalive = {}, bool allow_libhdf5 = true,
                           std::string_view unread = {});
  // An image lying inside a private file mapping (a .keras archive's stored member) or a file read
  // into memory (FileMapping::read), which it keeps alive: its datasets can be views (H5Dataset::view)
  // when the mapping is writable, and large ones are read with FileMapping::copy.
  static H5File open_mapped(const char* data, size_t size, std::string display_name, FileMapping::Ptr mapping,
                            bool allow_libhdf5 = true, std::string_view unread = {});

  H5Group root() const { return root_; }
  const std::string& name() const { return root_.file_name(); }
  uint64_t size() const;  // bytes of the file or image
  // "keras-subset" when kerascpp's own reader serves the file (a Keras-style file read whole or an
  // image), "libhdf5" otherwise (other HDF5 features, files read on demand).
  std::string_view backend() const;

  explicit H5File(std::shared_ptr<const detail::H5Node> root) : root_(std::move(root)) {}  // internal

 private:
  H5Group root_;
};

}  // namespace kerascpp::io
