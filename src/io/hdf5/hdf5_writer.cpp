#include "io/hdf5/hdf5_writer.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "io/hdf5/hdf5_common.h"

namespace kerascpp::io {
namespace detail {
struct H5WriterState {
  Hid file;  // closed by finish()
  std::string name;
  bool in_memory = false;
};
}  // namespace detail

namespace {

using detail::H5Lock;
using detail::Hid;

// keras/src/legacy/saving/legacy_h5_format.py: HDF5_OBJECT_HEADER_LIMIT.
constexpr size_t kObjectHeaderLimit = 64512;

std::atomic<uint64_t> g_memory_count{0};

hid_t open_file(const detail::H5WriterState& st, const std::string& path, std::string_view what) {
  if (!st.file.ok())
    KCPP_THROW(ValueError, "Unable to write ", what, " of \"", path, "\" in \"", st.name,
               "\": the file is already finished");
  return st.file.get();
}

Hid string_type(H5StringType type, size_t width) {
  Hid t(H5Tcopy(H5T_C_S1));
  if (type == H5StringType::fixed_ascii) {
    H5Tset_size(t.get(), width);
    H5Tset_strpad(t.get(), H5T_STR_NULLPAD);
  } else {
    H5Tset_size(t.get(), H5T_VARIABLE);
  }
  H5Tset_cset(t.get(), type == H5StringType::vlen_utf8 ? H5T_CSET_UTF8 : H5T_CSET_ASCII);
  return t;
}

// Writes one attribute (replacing an old one). `space` and `type` describe it; `data` is in the
// layout libhdf5 expects for `type`.
void write_attr(hid_t fid, const std::string& obj_path, const std::string& file_name,
                std::string_view name, hid_t type, hid_t space, const void* data) {
  std::string n(name);
  Hid obj(H5Oopen(fid, obj_path.c_str(), H5P_DEFAULT));
  bool ok = obj.ok();
  if (ok && H5Aexists(obj.get(), n.c_str()) > 0) ok = H5Adelete(obj.get(), n.c_str()) >= 0;
  Hid attr(ok ? H5Acreate2(obj.get(), n.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT) : -1);
  if (!attr.ok() || H5Awrite(attr.get(), type, data) < 0)
    detail::throw_h5<IOError>("Unable to write attribute \"", name, "\" of \"", obj_path,
                              "\" in \"", file_name, "\"");
}

}  // namespace

void H5WriteObject::write_attr_string(std::string_view name, std::string_view value,
                                      H5StringType type) const {
  write_strings(name, {std::string(value)}, type, /*scalar=*/true);
}

void H5WriteObject::write_attr_strings(std::string_view name, const std::vector<std::string>& values,
                                       H5StringType type) const {
  write_strings(name, values, type, /*scalar=*/false);
}

void H5WriteObject::write_strings(std::string_view name, const std::vector<std::string>& values,
                                  H5StringType type, bool scalar) const {
  H5Lock lock;
  hid_t fid = open_file(*file_, path_, "attribute");
  hsize_t n = values.size();
  Hid space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr));
  if (values.empty()) {  // Keras's empty list: np.asarray([]) is float64
    double unused = 0;
    write_attr(fid, path_, file_->name, name, H5T_IEEE_F64LE, space.get(), &unused);
    return;
  }
  size_t width = 1;
  for (const std::string& v : values) width = std::max(width, v.size());
  Hid t = string_type(type, width);
  if (type == H5StringType::fixed_ascii) {
    std::vector<char> buf(width * values.size(), '\0');
    for (size_t i = 0; i < values.size(); ++i)
      std::memcpy(buf.data() + i * width, values[i].data(), values[i].size());
    write_attr(fid, path_, file_->name, name, t.get(), space.get(), buf.data());
  } else {
    std::vector<const char*> ptrs;
    for (const std::string& v : values) ptrs.push_back(v.c_str());
    write_attr(fid, path_, file_->name, name, t.get(), space.get(), ptrs.data());
  }
}

void H5WriteObject::write_attr_strings_split(std::string_view name,
                                             const std::vector<std::string>& values) const {
  size_t width = 0;
  for (const std::string& v : values) {
    if (v.size() > kObjectHeaderLimit)
      KCPP_THROW(ValueError, "Unable to write attribute \"", name, "\" of \"", path_, "\" in \"",
                 file_->name, "\": a name of ", v.size(), " bytes is over the HDF5 object header "
                 "limit of ", kObjectHeaderLimit, " bytes");
    width = std::max(width, v.size());
  }
  size_t n = values.size(), pieces = 1;
  // numpy array_split: the first n % k pieces hold one more element. The width stays global.
  auto largest = [&](size_t k) { return (n / k + (n % k ? 1 : 0)) * width; };
  while (largest(pieces) > kObjectHeaderLimit) ++pieces;
  if (pieces == 1) return write_attr_strings(name, values, H5StringType::vlen_ascii);
  size_t start = 0;
  for (size_t k = 0; k < pieces; ++k) {
    size_t count = n / pieces + (k < n % pieces ? 1 : 0);
    std::vector<std::string> part(values.begin() + start, values.begin() + start + count);
    // Pad to the global width so that every piece has the itemsize Keras's numpy array has.
    if (!part.empty() && part[0].size() < width) part[0].resize(width, '\0');
    write_attr_strings(std::string(name) + std::to_string(k), part, H5StringType::fixed_ascii);
    start += count;
  }
}

H5WriteGroup H5WriteGroup::create_group(std::string_view rel) const {
  H5Lock lock;
  hid_t fid = open_file(*file_, path_, "group");
  std::string full = detail::join_path(path_, rel);
  htri_t exists = H5Lexists(fid, full.c_str(), H5P_DEFAULT) > 0 &&
                  H5Oexists_by_name(fid, full.c_str(), H5P_DEFAULT) > 0;
  detail::h5_error_text();
  if (exists) {
    Hid obj(H5Oopen(fid, full.c_str(), H5P_DEFAULT));
    if (!obj.ok() || H5Iget_type(obj.get()) != H5I_GROUP)
      KCPP_THROW(ValueError, "Unable to create group \"", full, "\" in \"", file_->name,
                 "\": something else of that name exists");
    return H5WriteGroup(file_, full);
  }
  Hid lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Hid gcpl(H5Pcreate(H5P_GROUP_CREATE));
  H5Pset_obj_track_times(gcpl.get(), false);  // identical bytes for identical models
  Hid g(H5Gcreate2(fid, full.c_str(), lcpl.get(), gcpl.get(), H5P_DEFAULT));
  if (!g.ok())
    detail::throw_h5<IOError>("Unable to create group \"", full, "\" in \"", file_->name, "\"");
  return H5WriteGroup(file_, full);
}

H5WriteObject H5WriteGroup::write_dataset(std::string_view rel, const Tensor& value) const {
  H5Lock lock;
  hid_t fid = open_file(*file_, path_, "dataset");
  std::string full = detail::join_path(path_, rel);
  if (!value.defined())
    KCPP_THROW(ValueError, "Unable to write dataset \"", full, "\" in \"", file_->name,
               "\": the tensor is undefined");
  Hid type = detail::file_type(value.dtype());
  std::vector<hsize_t> dims(value.shape().begin(), value.shape().end());
  Hid space(value.rank() == 0 ? H5Screate(H5S_SCALAR)
                              : H5Screate_simple(value.rank(), dims.data(), nullptr));
  Hid lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Hid dcpl(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_obj_track_times(dcpl.get(), false);
  Hid ds(H5Dcreate2(fid, full.c_str(), type.get(), space.get(), lcpl.get(), dcpl.get(),
                    H5P_DEFAULT));
  Hid owned;
  hid_t mem = ds.ok() ? detail::memory_type(value.dtype(), type.get(), &owned) : -1;
  if (!ds.ok() || (value.nbytes() > 0 &&
                   H5Dwrite(ds.get(), mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, value.raw_data()) < 0))
    detail::throw_h5<IOError>("Unable to write dataset \"", full, "\" in \"", file_->name, "\"");
  H5WriteObject out(file_, full);
  if (value.dtype() == DType::bfloat16) out.write_attr_string("dtype", "bfloat16");
  return out;
}

H5Writer H5Writer::create(const std::string& path) {
  H5Lock lock;
  auto st = std::make_shared<detail::H5WriterState>();
  st->name = path;
  // Default property lists: libver earliest (superblock v0, symbol-table groups), like h5py.
  st->file = Hid(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  if (!st->file.ok()) detail::throw_h5<IOError>("Unable to create HDF5 file \"", path, "\"");
  return H5Writer(std::move(st));
}

H5Writer H5Writer::create_in_memory(std::string display_name) {
  H5Lock lock;
  auto st = std::make_shared<detail::H5WriterState>();
  st->name = std::move(display_name);
  st->in_memory = true;
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_fapl_core(fapl.get(), 1 << 16, /*backing_store=*/false);
  // Every dataset at a multiple of 64 bytes (h5py places them wherever the last object ended), so
  // that a weight can be a view of the mapped file (LoadOptions::mmap_weights) whatever its dtype and
  // those before it.
  H5Pset_alignment(fapl.get(), 4, 64);
  // The core driver identifies open files by name: every in-memory file gets a unique one.
  std::string name = "kerascpp-memory-" + std::to_string(g_memory_count.fetch_add(1));
  st->file = Hid(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
  if (!st->file.ok())
    detail::throw_h5<IOError>("Unable to create in-memory HDF5 file \"", st->name, "\"");
  return H5Writer(std::move(st));
}

H5Writer::~H5Writer() {
  if (state_) state_->file.reset();
}

H5WriteGroup H5Writer::root() const { return H5WriteGroup(state_, "/"); }
const std::string& H5Writer::name() const { return state_->name; }

std::vector<char> H5Writer::finish() {
  H5Lock lock;
  hid_t fid = open_file(*state_, "/", "the file");
  std::vector<char> bytes;
  bool ok = H5Fflush(fid, H5F_SCOPE_GLOBAL) >= 0;
  if (ok && state_->in_memory) {
    ssize_t size = H5Fget_file_image(fid, nullptr, 0);
    ok = size > 0;
    if (ok) {
      bytes.resize(static_cast<size_t>(size));
      ok = H5Fget_file_image(fid, bytes.data(), bytes.size()) == size;
    }
  }
  if (!ok) detail::throw_h5<IOError>("Unable to finish HDF5 file \"", state_->name, "\"");
  // Close explicitly to see errors: H5Fclose writes the last metadata of a file on disk.
  if (H5Fclose(state_->file.release()) < 0)
    detail::throw_h5<IOError>("Unable to close HDF5 file \"", state_->name, "\"");
  return bytes;
}

}  // namespace kerascpp::io
