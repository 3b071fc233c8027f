#include "io/hdf5/hdf5_rows.h"

#include <algorithm>
#include <filesystem>

#include "io/hdf5/hdf5_common.h"

namespace kerascpp::io {
namespace detail {

struct H5RowFileState {
  Hid file;
  std::string name;
  bool created = false;
  ~H5RowFileState() {
    H5Lock lock;
    file.reset();
  }
};

struct H5RowsState {
  std::shared_ptr<H5RowFileState> file;  // first: closed after the dataset
  Hid ds;
  std::string path;
  DType dtype = DType::float32;
  ~H5RowsState() {
    H5Lock lock;
    ds.reset();
  }
};

}  // namespace detail

namespace {

using detail::H5Lock;
using detail::Hid;
using detail::throw_h5;

std::vector<hsize_t> dims_of(hid_t ds) {
  Hid space(H5Dget_space(ds));
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(std::max(rank, 0));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

const detail::H5RowFileState& open_state(const std::shared_ptr<detail::H5RowFileState>& s) {
  KCPP_CHECK(s && s->file.ok(), ValueError, "The HDF5 row file is closed");
  return *s;
}

}  // namespace

const std::string& H5Rows::path() const { return s_->path; }
DType H5Rows::dtype() const { return s_->dtype; }

Shape H5Rows::shape() const {
  H5Lock lock;
  Shape out;
  for (hsize_t d : dims_of(s_->ds.get())) out.push_back(static_cast<int64_t>(d));
  return out;
}

int64_t H5Rows::rows() const { return shape().at(0); }

void H5Rows::append(const Tensor& row) {
  H5Lock lock;
  std::vector<hsize_t> dims = dims_of(s_->ds.get());
  const Shape want(dims.begin() + 1, dims.end());
  Shape want_shape;
  for (hsize_t d : want) want_shape.push_back(static_cast<int64_t>(d));
  KCPP_CHECK(row.shape() == want_shape, ValueError, "A row of \"", s_->path, "\" in \"", s_->file->name,
             "\" must have shape ", shape_str(want_shape), ". Received: ", shape_str(row.shape()));
  const Tensor value = row.copy();  // contiguous
  const hsize_t at = dims[0];
  dims[0] = at + 1;
  const std::string what = "\"" + s_->path + "\" in \"" + s_->file->name + "\"";
  if (H5Dset_extent(s_->ds.get(), dims.data()) < 0) throw_h5<IOError>("Unable to extend ", what);
  Hid fspace(H5Dget_space(s_->ds.get()));
  std::vector<hsize_t> start(dims.size(), 0), count(dims);
  start[0] = at, count[0] = 1;
  H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  Hid mspace(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr));
  Hid ftype(H5Dget_type(s_->ds.get())), owned;
  const hid_t mem = detail::memory_type(value.dtype(), ftype.get(), &owned);
  if (H5Dwrite(s_->ds.get(), mem, mspace.get(), fspace.get(), H5P_DEFAULT, value.raw_data()) < 0)
    throw_h5<IOError>("Unable to write a row of ", what);
}

void H5Rows::truncate(int64_t rows) {
  H5Lock lock;
  std::vector<hsize_t> dims = dims_of(s_->ds.get());
  KCPP_CHECK(rows >= 0 && static_cast<hsize_t>(rows) <= dims[0], ValueError, "Cannot truncate \"", s_->path,
             "\" to ", rows, " rows: it has ", dims[0]);
  dims[0] = static_cast<hsize_t>(rows);
  if (H5Dset_extent(s_->ds.get(), dims.data()) < 0)
    throw_h5<IOError>("Unable to truncate \"", s_->path, "\" in \"", s_->file->name, "\"");
}

H5RowFile H5RowFile::open_or_create(const std::string& path) {
  H5Lock lock;
  auto s = std::make_shared<detail::H5RowFileState>();
  s->name = path;
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_V110);
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    s->file = Hid(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()));
    if (!s->file.ok()) throw_h5<IOError>("Unable to open \"", path, "\" for appending");
  } else {
    s->file = Hid(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()));
    if (!s->file.ok()) throw_h5<IOError>("Unable to create \"", path, "\"");
    s->created = true;
  }
  return H5RowFile(std::move(s));
}

bool H5RowFile::created() const { return s_->created; }
const std::string& H5RowFile::name() const { return s_->name; }

std::vector<std::string> H5RowFile::dataset_paths() const {
  H5Lock lock;
  const hid_t file = open_state(s_).file.get();
  std::vector<std::string> links, out;
  H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, collect_link, &links);
  for (const auto& l : links) {
    Hid o(H5Oopen(file, l.c_str(), H5P_DEFAULT));
    if (o.ok() && H5Iget_type(o.get()) == H5I_DATASET) out.push_back(l);
  }
  return out;
}

H5Rows H5RowFile::create_rows(const std::string& path, DType dtype, const Shape& row_shape) const {
  H5Lock lock;
  const hid_t file = open_state(s_).file.get();
  std::vector<hsize_t> dims{0}, maxdims{H5S_UNLIMITED}, chunk{1};
  for (int64_t d : row_shape) {
    dims.push_back(static_cast<hsize_t>(d));
    maxdims.push_back(static_cast<hsize_t>(d));
    chunk.push_back(std::max<hsize_t>(1, static_cast<hsize_t>(d)));
  }
  Hid space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxdims.data()));
  Hid dcpl(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data());
  Hid lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Hid type = detail::file_type(dtype);
  auto rows = std::make_shared<detail::H5RowsState>();
  rows->file = s_;
  rows->path = path;
  rows->dtype = dtype;
  rows->ds = Hid(H5Dcreate2(file, path.c_str(), type.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT));
  if (!rows->ds.ok()) throw_h5<IOError>("Unable to create dataset \"", path, "\" in \"", s_->name, "\"");
  return H5Rows(std::move(rows));
}

H5Rows H5RowFile::open_rows(const std::string& path) const {
  H5Lock lock;
  const hid_t file = open_state(s_).file.get();
  auto rows = std::make_shared<detail::H5RowsState>();
  rows->file = s_;
  rows->path = path;
  KCPP_CHECK(H5Lexists(file, path.c_str(), H5P_DEFAULT) > 0, ValueError, "\"", s_->name, "\" has no dataset \"",
             path, "\"");
  rows->ds = Hid(H5Dopen2(file, path.c_str(), H5P_DEFAULT));
  if (!rows->ds.ok()) throw_h5<ValueError>("\"", path, "\" in \"", s_->name, "\" is not a dataset");
  KCPP_CHECK(!dims_of(rows->ds.get()).empty(), ValueError, "\"", path, "\" in \"", s_->name,
             "\" is a scalar, not rows");
  Hid type(H5Dget_type(rows->ds.get()));
  std::string why;
  const auto dt = detail::dtype_of(type.get(), rows->ds.get(), &why);
  KCPP_CHECK(dt.has_value(), ValueError, "\"", path, "\" in \"", s_->name, "\" holds ", why);
  rows->dtype = *dt;
  return H5Rows(std::move(rows));
}

void H5RowFile::flush() const {
  H5Lock lock;
  if (H5Fflush(open_state(s_).file.get(), H5F_SCOPE_LOCAL) < 0) throw_h5<IOError>("Unable to flush \"", s_->name, "\"");
}

void H5RowFile::close() { s_.reset(); }

}  // namespace kerascpp::io
