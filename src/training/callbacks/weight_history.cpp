// WeightHistory (kerascpp's own callback): the model's weights every `every` epochs, appended to an
// HDF5 file. Each weight is one chunked dataset of shape (snapshots, *weight shape) with one
// snapshot per chunk, so a snapshot extends each dataset by one row and writes one chunk: its cost
// is the weights' bytes, however many snapshots the file holds; nothing is ever rewritten. The file
// uses the 1.10 format, whose chunk index for one unlimited axis is an extensible array (constant
// cost per chunk) rather than a B-tree. "epoch" (snapshots,) is written last and is the commit
// mark: after a crash mid-snapshot, rows past its length are dropped on reopen.
// All of kerascpp's HDF5 calls for callbacks are in this file; it uses io/hdf5's locking and handles.
#include <algorithm>
#include <filesystem>
#include <set>

#include "io/hdf5/hdf5_common.h"
#include "kerascpp/error.h"
#include "kerascpp/model.h"

namespace kerascpp::callbacks {

using io::detail::H5Lock;
using io::detail::Hid;
using io::detail::throw_h5;

struct WeightHistory::File {
  Hid file, epoch_ds;
  std::vector<VariablePtr> vars;
  std::vector<Hid> datasets;  // one per var
  hsize_t rows = 0;           // snapshots written
};

namespace {

std::string shape_str(const std::vector<hsize_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

std::vector<hsize_t> dims_of(hid_t ds) {
  Hid space(H5Dget_space(ds));
  int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(std::max(rank, 0));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

// A chunked (0, *shape) dataset that grows along axis 0, one row per chunk.
Hid create_rows(hid_t file, const std::string& path, hid_t type, const Shape& shape, const std::string& fname) {
  std::vector<hsize_t> dims{0}, maxdims{H5S_UNLIMITED}, chunk{1};
  for (int64_t d : shape) {
    dims.push_back(static_cast<hsize_t>(d));
    maxdims.push_back(static_cast<hsize_t>(d));
    chunk.push_back(std::max<hsize_t>(1, static_cast<hsize_t>(d)));
  }
  Hid space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxdims.data()));
  Hid dcpl(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data());
  Hid lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Hid ds(H5Dcreate2(file, path.c_str(), type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT));
  if (!ds.ok()) throw_h5<IOError>("WeightHistory: unable to create dataset \"", path, "\" in \"", fname, "\"");
  return ds;
}

// Extends `ds` by one row and writes `data` (one row's bytes, in `mem_type`) into it.
void append_row(hid_t ds, hsize_t row, hid_t mem_type, const void* data, const std::string& what) {
  std::vector<hsize_t> dims = dims_of(ds);
  dims[0] = row + 1;
  if (H5Dset_extent(ds, dims.data()) < 0) throw_h5<IOError>("WeightHistory: unable to extend ", what);
  Hid fspace(H5Dget_space(ds));
  std::vector<hsize_t> start(dims.size(), 0), count(dims);
  start[0] = row, count[0] = 1;
  H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  Hid mspace(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr));
  if (H5Dwrite(ds, mem_type, mspace.get(), fspace.get(), H5P_DEFAULT, data) < 0)
    throw_h5<IOError>("WeightHistory: unable to write ", what);
}

herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

}  // namespace

WeightHistory::WeightHistory(std::string filename, int every) : filename_(std::move(filename)), every_(every) {
  KCPP_CHECK(every_ >= 1, ValueError, "WeightHistory: `every` must be at least 1. Received: every=", every_);
}

WeightHistory::~WeightHistory() {
  if (file_) {
    H5Lock lock;
    file_.reset();
  }
}

void WeightHistory::on_train_begin(Logs&) {
  KCPP_CHECK(model() != nullptr, ValueError, "WeightHistory has no model: call set_model() first.");
  H5Lock lock;
  file_.reset();
  auto f = std::make_unique<File>();
  f->vars = model()->weights();
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_V110);
  std::error_code ec;
  bool exists = std::filesystem::exists(filename_, ec);
  if (exists) {
    f->file = Hid(H5Fopen(filename_.c_str(), H5F_ACC_RDWR, fapl.get()));
    if (!f->file.ok()) throw_h5<IOError>("WeightHistory: unable to open \"", filename_, "\" for appending");
  } else {
    f->file = Hid(H5Fcreate(filename_.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()));
    if (!f->file.ok()) throw_h5<IOError>("WeightHistory: unable to create \"", filename_, "\"");
  }
  hid_t file = f->file.get();
  if (exists) {
    // The file must hold exactly this model's weights, by path, shape and dtype.
    std::vector<std::string> links;
    H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, collect_link, &links);
    std::set<std::string> in_file;
    for (const auto& l : links) {
      Hid o(H5Oopen(file, l.c_str(), H5P_DEFAULT));
      if (o.ok() && H5Iget_type(o.get()) == H5I_DATASET && l != "epoch") in_file.insert(l);
    }
    f->epoch_ds = Hid(H5Dopen2(file, "epoch", H5P_DEFAULT));
    KCPP_CHECK(f->epoch_ds.ok(), ValueError, "WeightHistory: \"", filename_,
               "\" is not a weight history: it has no \"epoch\" dataset.");
    f->rows = dims_of(f->epoch_ds.get()).at(0);
    for (const auto& v : f->vars) {
      KCPP_CHECK(in_file.erase(v->path()) == 1, ValueError, "WeightHistory: \"", filename_,
                 "\" holds the weights of another model: it has no weight \"", v->path(), "\".");
      Hid ds(H5Dopen2(file, v->path().c_str(), H5P_DEFAULT));
      std::vector<hsize_t> dims = dims_of(ds.get()), want{f->rows};
      for (int64_t d : v->shape()) want.push_back(static_cast<hsize_t>(d));
      KCPP_CHECK(dims.size() == want.size() && std::equal(dims.begin() + 1, dims.end(), want.begin() + 1) &&
                     dims[0] >= f->rows,
                 ValueError, "WeightHistory: \"", filename_, "\" holds the weights of another model: weight \"",
                 v->path(), "\" has shape ", shape_str(dims), " there, expected (", f->rows, ", *", v->shape(),
                 ") for this model.");
      Hid type(H5Dget_type(ds.get()));
      std::string why;
      auto dt = io::detail::dtype_of(type.get(), ds.get(), &why);
      KCPP_CHECK(dt && *dt == v->dtype(), ValueError, "WeightHistory: \"", filename_, "\" holds weight \"",
                 v->path(), "\" as ", dt ? std::string(dtype_name(*dt)) : why, ", expected ", dtype_name(v->dtype()), ".");
      // Rows past "epoch" are from a snapshot cut short: drop them.
      if (dims[0] > f->rows) {
        dims[0] = f->rows;
        H5Dset_extent(ds.get(), dims.data());
      }
      f->datasets.push_back(std::move(ds));
    }
    if (!in_file.empty())
      KCPP_THROW(ValueError, "WeightHistory: \"", filename_, "\" holds the weights of another model: weight \"",
                 *in_file.begin(), "\" is not a weight of this model.");
  } else {
    for (const auto& v : f->vars) {
      Hid type = io::detail::file_type(v->dtype());
      f->datasets.push_back(create_rows(file, v->path(), type.get(), v->shape(), filename_));
    }
    Hid type(H5Tcopy(H5T_STD_I64LE));
    f->epoch_ds = create_rows(file, "epoch", type.get(), Shape{}, filename_);
    H5Fflush(file, H5F_SCOPE_LOCAL);
  }
  file_ = std::move(f);
}

void WeightHistory::on_epoch_end(int epoch, Logs&) {
  if ((epoch + 1) % every_ != 0) return;
  KCPP_CHECK(file_ != nullptr, ValueError, "WeightHistory: on_epoch_end before on_train_begin (\"", filename_, "\").");
  H5Lock lock;
  File& f = *file_;
  for (size_t i = 0; i < f.vars.size(); ++i) {
    Tensor value = f.vars[i]->value().copy();  // contiguous, and consistent if another thread assigns
    Hid ftype(H5Dget_type(f.datasets[i].get())), owned;
    hid_t mem = io::detail::memory_type(value.dtype(), ftype.get(), &owned);
    append_row(f.datasets[i].get(), f.rows, mem, value.raw_data(), "weight \"" + f.vars[i]->path() + "\" in \"" + filename_ + "\"");
  }
  int64_t e = epoch;
  append_row(f.epoch_ds.get(), f.rows, H5T_NATIVE_INT64, &e, "\"epoch\" in \"" + filename_ + "\"");
  f.rows += 1;
  if (H5Fflush(f.file.get(), H5F_SCOPE_LOCAL) < 0) throw_h5<IOError>("WeightHistory: unable to flush \"", filename_, "\"");
}

void WeightHistory::on_train_end(Logs&) {
  H5Lock lock;
  file_.reset();  // closes the datasets, then the file
}

}  // namespace kerascpp::callbacks
