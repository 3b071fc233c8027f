// Writing HDF5 files the way h5py-based Keras writes them (superblock v0, symbol-table groups,
// contiguous unfiltered little-endian datasets), so that Keras reads them back. Like the reader,
// this is the one place through which kerascpp writes HDF5.
//
//   H5Writer w = H5Writer::create_in_memory("model.weights.h5");
//   H5WriteGroup vars = w.root().create_group("layers/dense/vars");
//   vars.write_attr_string("name", "dense");
//   vars.write_dataset("0", kernel);               // a Tensor; float32 -> H5T_IEEE_F32LE
//   std::vector<char> bytes = w.finish();          // a complete HDF5 file image
//
// Groups and datasets are addressed by path and opened only for the call, so nothing stays open
// behind the caller's back; finish() closes the file, after which every writer object refuses
// work. Errors: IOError for libhdf5 failures (with its reason), ValueError for bad arguments.
// Output is byte-for-byte reproducible (no timestamps). Checked by hand: h5py 3.14 reads every
// type and attribute kind written here, and Keras 3.15 loads .h5 and .keras files written with it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kerascpp/tensor.h"

namespace kerascpp::io {

namespace detail {
struct H5WriterState;
}

enum class H5StringType {
  vlen_utf8,    // what h5py writes for a Python str (keras_version, backend, "name" attributes)
  vlen_ascii,   // what h5py writes for bytes: Keras's model_config, h5py >= 3 string lists
  fixed_ascii,  // fixed-length NULLPAD (numpy 'S' arrays): h5py < 3 lists, Keras's split attributes
};

// A written group or dataset: attributes can be added to it.
class H5WriteObject {
 public:
  const std::string& path() const { return path_; }  // "/" or "a/b"
  // Replaces an existing attribute of that name, as h5py does.
  void write_attr_string(std::string_view name, std::string_view value,
                         H5StringType type = H5StringType::vlen_utf8) const;
  // An empty list is written as a zero-length float64 array, as Keras writes empty weight_names.
  void write_attr_strings(std::string_view name, const std::vector<std::string>& values,
                          H5StringType type = H5StringType::vlen_ascii) const;
  // Keras's save_attributes_to_hdf5_group: `name` as vlen ASCII if count x longest name fits in
  // 64512 bytes, else `name0`, `name1`, ... as fixed-length pieces (numpy array_split). Throws
  // ValueError for a single name longer than the limit.
  void write_attr_strings_split(std::string_view name,
                                const std::vector<std::string>& values) const;

 protected:
  friend class H5WriteGroup;
  H5WriteObject(std::shared_ptr<detail::H5WriterState> file, std::string path)
      : file_(std::move(file)), path_(std::move(path)) {}
  void write_strings(std::string_view name, const std::vector<std::string>& values,
                     H5StringType type, bool scalar) const;
  std::shared_ptr<detail::H5WriterState> file_;
  std::string path_;
};

class H5WriteGroup : public H5WriteObject {
 public:
  // Creates the group and any missing intermediate groups; an existing group is reused.
  H5WriteGroup create_group(std::string_view rel) const;
  // A contiguous, unfiltered dataset holding `value` (intermediate groups are created). Rank 0
  // gives a scalar dataspace; bfloat16 becomes Keras's 2-byte opaque type with dtype="bfloat16";
  // bool becomes h5py's enum of int8.
  H5WriteObject write_dataset(std::string_view rel, const Tensor& value) const;

 private:
  friend class H5Writer;
  using H5WriteObject::H5WriteObject;
};

class H5Writer {
 public:
  static H5Writer create(const std::string& path);  // truncates an existing file
  static H5Writer create_in_memory(std::string display_name = "<memory>");
  H5Writer(H5Writer&&) noexcept = default;
  H5Writer& operator=(H5Writer&&) noexcept = default;
  ~H5Writer();  // closes the file if finish() was not called

  H5WriteGroup root() const;
  const std::string& name() const;
  // Flushes and closes the file. Returns the file's bytes for an in-memory file, {} for a file on
  // disk (the caller fsyncs / renames it as needed).
  std::vector<char> finish();

 private:
  explicit H5Writer(std::shared_ptr<detail::H5WriterState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::H5WriterState> state_;
};

}  // namespace kerascpp::io
