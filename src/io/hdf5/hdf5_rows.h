// HDF5 files of datasets that grow by rows (a training log of weights): each dataset is chunked
// (rows, *row_shape) with one row per chunk, so appending a row extends it by one and writes one
// chunk, whatever the file already holds; nothing is ever rewritten. Files use the 1.10 format, whose
// chunk index for one unlimited axis is an extensible array (constant cost per chunk), not a B-tree.
// Like hdf5_writer.h, this is one of the io/hdf5 doors: callers never see libhdf5.
//
//   H5RowFile f = H5RowFile::open_or_create("history.h5");
//   H5Rows w = f.created() ? f.create_rows("dense/kernel", DType::float32, {4, 2}) : f.open_rows("dense/kernel");
//   w.append(kernel_value);   // a Tensor of row_shape
//   f.flush();
//
// Errors: IOError for libhdf5 failures (with its reason and the file's name), ValueError for a dataset
// that is not rows of a known dtype.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kerascpp/tensor.h"

namespace kerascpp::io {

namespace detail {
struct H5RowsState;
struct H5RowFileState;
}  // namespace detail

// One growing dataset; valid while its H5RowFile lives (it keeps the file open).
class H5Rows {
 public:
  H5Rows() = default;  // none yet: assign one from an H5RowFile
  const std::string& path() const;
  DType dtype() const;
  // The dataset's full shape: (rows, *row_shape).
  Shape shape() const;
  int64_t rows() const;
  // Appends one row (a tensor of row_shape, any dtype the file's converts from).
  void append(const Tensor& row);
  // Drops the rows past `rows` (a snapshot cut short by a crash).
  void truncate(int64_t rows);

 private:
  friend class H5RowFile;
  explicit H5Rows(std::shared_ptr<detail::H5RowsState> s) : s_(std::move(s)) {}
  std::shared_ptr<detail::H5RowsState> s_;
};

class H5RowFile {
 public:
  // Opens `path` for appending, or creates it when there is no such file.
  static H5RowFile open_or_create(const std::string& path);
  bool created() const;  // true when open_or_create made a new file
  const std::string& name() const;
  // Every dataset's path in the file ("dense/kernel", "epoch").
  std::vector<std::string> dataset_paths() const;
  // A new (0, *row_shape) dataset, with intermediate groups.
  H5Rows create_rows(const std::string& path, DType dtype, const Shape& row_shape) const;
  // An existing dataset; ValueError when it is missing or not a chunked dataset of a known dtype.
  H5Rows open_rows(const std::string& path) const;
  void flush() const;
  // Drops this handle: the file closes once the datasets taken from it are gone too.
  void close();

 private:
  explicit H5RowFile(std::shared_ptr<detail::H5RowFileState> s) : s_(std::move(s)) {}
  std::shared_ptr<detail::H5RowFileState> s_;
};

}  // namespace kerascpp::io
