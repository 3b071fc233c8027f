// H5File (opening files and images) and H5Group (navigation).
//
// Choice of reading strategy for H5File::open, measured on a shared 2-core VM, files in the page
// cache. A Keras load of tests/fixtures/seed_mlp_2x10/keras3/model.h5 (34 KB: open, model_config,
// layer_names, 3 x weight_names, 6 datasets), best of 15 medians of 200 loads:
//   whole_read 271 us, on_demand 342 us; libhdf5's core 275 us, sec2 357 us.
// Reading every dataset of h5py files (min of 200 runs; 4 to 12 for the large ones):
//   size      on_demand  whole_read  sec2 (libhdf5)  core (libhdf5)
//   70 KB     0.16 ms    0.13 ms     0.18 ms         0.14 ms
//   266 KB    0.22 ms    0.20 ms     0.23 ms         0.21 ms
//   1 MB      0.29 ms    0.26 ms     0.29 ms         0.31 ms
//   4 MB      0.36 ms    0.58 ms     0.37 ms         0.57 ms
//   200 MB    45 ms      200 ms      46 ms           280 ms
// One read() of the whole file wins while libhdf5's ~50 small metadata reads dominate; beyond
// that reading on demand wins because each dataset goes straight into its tensor, while an image
// costs a second copy and twice the memory. libhdf5's own CPU time (H5Dopen2 ~14 us, open + close
// ~100 us) is the floor there, so a file read whole (and any image) goes to kerascpp's reader for
// Keras's HDF5 subset (keras_h5_reader.h) when it fits that subset: the same Keras load then takes
// ~20 us instead of ~290 us (tests/cpp/containers/keras_h5_reader_test.cpp, LoadTime).
// A large file mapped (`mapped`) is an image without the second copy, so kerascpp's reader serves it
// too, each dataset copied once from the page cache: InceptionResNetV2's 226 MB .h5 then loads in
// 106 ms instead of 174 ms on_demand (libhdf5's handles and calls were a fifth of it; Python's
// load_model, model freed between loads), MobileNetV2's 15 MB in 9.2 instead of 20.5 ms. Hence
// `automatic`: whole_read up to 512 KiB, mapped above. Files outside the subset go to libhdf5 on
// the mapping.
#include "io/hdf5/hdf5_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/hdf5/hdf5_common.h"
#include "io/hdf5/hdf5_driver.h"
#include "io/hdf5/keras_h5_reader.h"
#include "io/mapping/file_mapping.h"

namespace kerascpp::io {
namespace {

using detail::H5FileState;
using detail::H5Lock;
using detail::H5Node;
using detail::Hid;


[[noreturn]] void throw_open_error(const std::string& name, std::string reason) {
  if (reason.find("signature not found") != std::string::npos)
    reason += " (this is not an HDF5 file)";
  KCPP_THROW(IOError, "Unable to open \"", name, "\" as an HDF5 file: ",
             reason.empty() ? "unknown error" : reason);
}

H5File make_file(hid_t fid, std::string name, uint64_t size, std::shared_ptr<const void> keepalive);
H5File open_in_place(const void* data, size_t size, std::string display_name,
                     std::shared_ptr<const void> keepalive, bool allow_libhdf5, FileMapping::Ptr mapping,
                     std::string_view unread);

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { if (fd_ >= 0) ::close(fd_); }
  int get() const { return fd_; }

 private:
  int fd_;
};

// What stands at `rel` under group `g`: H5I_GROUP, H5I_DATASET, H5I_DATATYPE or H5I_BADID.
H5I_type_t kind_of(const H5Group& g, const H5Node& node, std::string_view rel) {
  if (node.obj) {
    const detail::kh5::Object* o = node.file->fast->find(*node.obj, rel);
    if (!o) return H5I_BADID;
    return o->kind == detail::kh5::Object::Kind::group ? H5I_GROUP : H5I_DATASET;
  }
  hid_t gid = node.id.get();
  if (!g.has(rel)) return H5I_BADID;
  H5Lock lock;
  Hid obj(H5Oopen(gid, std::string(rel).c_str(), H5P_DEFAULT));
  if (!obj.ok()) {
    detail::h5_error_text();
    return H5I_BADID;
  }
  return H5Iget_type(obj.get());
}

}  // namespace

H5File H5File::open(FileMapping::Ptr bytes, const std::string& path, bool allow_libhdf5,
                    std::string_view unread) {
  const char* data = bytes->data();
  const size_t size = bytes->size();
  return open_image(data, size, path, std::move(bytes), allow_libhdf5, unread);
}

H5File H5File::open(const std::string& path, H5Driver driver, bool allow_libhdf5, std::string_view unread) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) KCPP_THROW(IOError, "Unable to open \"", path, "\": ", std::strerror(errno));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    KCPP_THROW(IOError, "Unable to open \"", path, "\": ", std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    KCPP_THROW(IOError, "Unable to open \"", path, "\" as an HDF5 file: it is a directory");
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0)
    KCPP_THROW(IOError, "Unable to open \"", path, "\" as an HDF5 file: the file is empty");
  const bool automatic = driver == H5Driver::automatic;
  if (automatic) driver = size <= FileMapping::kReadLimit ? H5Driver::whole_read : H5Driver::mapped;
  if (driver == H5Driver::mapped || driver == H5Driver::mapped_views) {
    FileMapping::Ptr mapping;
    try {
      mapping = FileMapping::map(fd.get(), size, path, driver == H5Driver::mapped_views);
    } catch (const IOError&) {
      if (automatic && allow_libhdf5) driver = H5Driver::on_demand;  // a file system that cannot map
      else throw;
    }
    if (mapping) return open_mapped(mapping->data(), size, path, mapping, allow_libhdf5, unread);
  }

  if (driver == H5Driver::whole_read || !allow_libhdf5)
    return open(FileMapping::read(fd.get(), size, path), path, allow_libhdf5, unread);
  H5Lock lock;
  if (driver == H5Driver::on_demand) {
    std::string why;
    hid_t fid = detail::open_with_driver(path.c_str(), nullptr, 0, &why);
    if (fid < 0) throw_open_error(path, why);
    return make_file(fid, path, size, nullptr);
  }
  // libhdf5's own drivers, kept for comparison.
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (driver == H5Driver::core)
    H5Pset_fapl_core(fapl.get(), 1 << 20, /*backing_store=*/false);
  else
    H5Pset_fapl_sec2(fapl.get());
  hid_t fid = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (fid < 0) throw_open_error(path, detail::h5_error_text());
  return make_file(fid, path, size, nullptr);
}

H5File H5File::open_mapped(const char* data, size_t size, std::string display_name, FileMapping::Ptr mapping,
                           bool allow_libhdf5, std::string_view unread) {
  KCPP_CHECK(mapping && data >= mapping->data() && size <= mapping->size() &&
                 static_cast<size_t>(data - mapping->data()) <= mapping->size() - size,
             ValueError, "H5File::open_mapped: the image of \"", display_name, "\" does not lie in its mapping");
  return open_in_place(data, size, std::move(display_name), mapping, allow_libhdf5, mapping, unread);
}

H5File H5File::open_image(const void* data, size_t size, std::string display_name,
                          std::shared_ptr<const void> keepalive, bool allow_libhdf5,
                          std::string_view unread) {
  return open_in_place(data, size, std::move(display_name), std::move(keepalive), allow_libhdf5, nullptr,
                       unread);
}

namespace {
// An image read in place; `mapping` (the image lies in it) lets kerascpp's reader hand out views.
H5File open_in_place(const void* data, size_t size, std::string display_name,
                     std::shared_ptr<const void> keepalive, bool allow_libhdf5, FileMapping::Ptr mapping,
                     std::string_view unread) {
  if (data == nullptr || size == 0)
    KCPP_THROW(IOError, "Unable to open \"", display_name, "\" as an HDF5 file: it is empty");
  std::string unsupported;  // why kerascpp's reader passes the file to libhdf5
  if (std::shared_ptr<const detail::kh5::File> fast = detail::kh5::File::parse(
          static_cast<const char*>(data), size, display_name, &unsupported, unread)) {
    auto state = std::make_shared<H5FileState>();
    state->keepalive = std::move(keepalive);
    state->name = std::move(display_name);
    state->size = size;
    state->mapping = std::move(mapping);
    const detail::kh5::Object* root = &fast->root();
    state->fast = std::move(fast);
    return H5File(std::make_shared<H5Node>(H5Node{state, Hid(), "/", Hid(), root}));
  }
  if (!allow_libhdf5)
    KCPP_THROW(IOError, "Unable to open \"", display_name, "\" as an HDF5 file: it has ", unsupported,
               ", outside the HDF5 subset that kerascpp reads itself, and libhdf5 is not allowed to read it "
               "(LoadLimits::allow_libhdf5 is false)");
  // Before libhdf5 sees the file, every part kerascpp's reader understands is checked: the unread
  // member's too (an IOError if it is damaged).
  if (!unread.empty())
    (void)detail::kh5::File::parse(static_cast<const char*>(data), size, display_name, &unsupported);
  return detail::open_image_libhdf5(data, size, std::move(display_name), std::move(keepalive));
}
}  // namespace

H5File detail::open_image_libhdf5(const void* data, size_t size, std::string display_name,
                                  std::shared_ptr<const void> keepalive) {
  if (data == nullptr || size == 0)
    KCPP_THROW(IOError, "Unable to open \"", display_name, "\" as an HDF5 file: it is empty");
  H5Lock lock;
  std::string why;
  // An absolute name: libhdf5 calls getcwd() to resolve a relative one. Images are told apart by
  // address, not by name.
  hid_t fid = detail::open_with_driver("/kerascpp-image", data, size, &why);
  if (fid < 0) throw_open_error(display_name, why);
  return make_file(fid, std::move(display_name), size, std::move(keepalive));
}

namespace {
H5File make_file(hid_t fid, std::string name, uint64_t size, std::shared_ptr<const void> keepalive) {
  auto state = std::make_shared<H5FileState>();
  state->keepalive = std::move(keepalive);
  state->file = Hid(fid);
  state->name = std::move(name);
  state->size = size;
  // libhdf5 takes a file id wherever it takes a group (meaning the root group), which saves an
  // H5Gopen2 per file; the extra reference lets the root node and the state close it separately.
  H5Iinc_ref(fid);
  return H5File(std::make_shared<H5Node>(H5Node{state, Hid(fid), "/", Hid()}));
}
}  // namespace

uint64_t H5File::size() const { return root_.node_->file->size; }

std::string_view H5File::backend() const { return root_.node_->obj ? "keras-subset" : "libhdf5"; }

bool H5Group::has(std::string_view rel) const {
  while (!rel.empty() && rel.back() == '/') rel.remove_suffix(1);
  if (rel.empty() || rel == ".") return true;
  if (node_->obj) return node_->file->fast->find(*node_->obj, rel) != nullptr;
  H5Lock lock;
  hid_t g = node_->id.get();
  std::string r(rel);
  // H5Lexists fails (rather than answering false) when an intermediate group is missing, so every
  // prefix is checked in turn.
  for (size_t i = r.find('/', 1); i != std::string::npos; i = r.find('/', i + 1)) {
    if (r[i - 1] == '/') continue;
    if (H5Lexists(g, r.substr(0, i).c_str(), H5P_DEFAULT) <= 0) {
      detail::h5_error_text();
      return false;
    }
  }
  bool ok = H5Lexists(g, r.c_str(), H5P_DEFAULT) > 0 &&
            H5Oexists_by_name(g, r.c_str(), H5P_DEFAULT) > 0;  // false for a dangling soft link
  detail::h5_error_text();
  return ok;
}

bool H5Group::is_group(std::string_view rel) const {
  return kind_of(*this, *node_, rel) == H5I_GROUP;
}

bool H5Group::is_dataset(std::string_view rel) const {
  return kind_of(*this, *node_, rel) == H5I_DATASET;
}

std::vector<std::string> H5Group::members() const {
  std::vector<std::string> names;
  if (node_->obj) {
    names.reserve(node_->obj->members.size());
    for (const auto& m : node_->obj->members) names.emplace_back(m.first);
    return names;
  }
  H5Lock lock;
  auto add = [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->emplace_back(name);
    return 0;
  };
  if (H5Literate(node_->id.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, add, &names) < 0)
    detail::throw_h5<IOError>("Unable to list the members of group \"", path(), "\" in \"",
                              file_name(), "\"");
  return names;
}

H5Group H5Group::group(std::string_view rel) const {
  if (rel.empty() || rel == ".") return *this;
  if (node_->obj) {
    const detail::kh5::Object* o = node_->file->fast->find(*node_->obj, rel);
    if (!o || o->kind != detail::kh5::Object::Kind::group) throw_missing(rel, "group");
    return H5Group(std::make_shared<H5Node>(
        H5Node{node_->file, Hid(), detail::join_path(path(), rel), Hid(), o}));
  }
  H5Lock lock;
  hid_t id = H5Gopen2(node_->id.get(), std::string(rel).c_str(), H5P_DEFAULT);
  if (id < 0) throw_missing(rel, "group");
  return H5Group(
      std::make_shared<H5Node>(H5Node{node_->file, Hid(id), detail::join_path(path(), rel), Hid()}));
}

H5Dataset H5Group::dataset(std::string_view rel) const {
  if (node_->obj) {
    const detail::kh5::File& file = *node_->file->fast;
    const detail::kh5::Object* o = file.find(*node_->obj, rel);
    if (!o || o->kind != detail::kh5::Object::Kind::dataset) throw_missing(rel, "dataset");
    auto node = std::make_shared<H5Node>(
        H5Node{node_->file, Hid(), detail::join_path(path(), rel), Hid(), o});
    if (o->space.null)
      KCPP_THROW(ValueError, "Unable to read dataset \"", node->path, "\" in \"", file_name(),
                 "\": it has a null dataspace (no data)");
    Shape shape(o->space.dims.begin(), o->space.dims.end());
    if (o->space.points > (1ull << 50))
      KCPP_THROW(IOError, "Unable to read dataset \"", node->path, "\" in \"", file_name(),
                 "\": implausible shape ", shape_str(shape), " (damaged file?)");
    std::string why;
    std::optional<DType> dtype = file.dtype_of(*o, &why);
    return H5Dataset(std::move(node), std::move(shape), dtype.has_value(),
                     dtype.value_or(DType::float32), std::move(why));
  }
  H5Lock lock;
  hid_t id = H5Dopen2(node_->id.get(), std::string(rel).c_str(), H5P_DEFAULT);
  if (id < 0) throw_missing(rel, "dataset");
  auto node = std::make_shared<H5Node>(
      H5Node{node_->file, Hid(id), detail::join_path(path(), rel), Hid(H5Dget_type(id))});
  auto fail = [&](const char* what) {
    detail::throw_h5<IOError>("Unable to read dataset \"", node->path, "\" in \"", file_name(),
                              "\": ", what);
  };
  // Few calls on purpose: each libhdf5 API call costs about half a microsecond of bookkeeping.
  Hid space(H5Dget_space(id));
  hsize_t dims[H5S_MAX_RANK];
  int rank = space.ok() ? H5Sget_simple_extent_dims(space.get(), dims, nullptr) : -1;
  if (!node->type.ok() || rank < 0) fail("unreadable dataspace or type");
  if (rank == 0 && H5Sget_simple_extent_npoints(space.get()) == 0)
    KCPP_THROW(ValueError, "Unable to read dataset \"", node->path, "\" in \"", file_name(),
               "\": it has a null dataspace (no data)");
  Shape shape(dims, dims + rank);
  // Refuse sizes no real file can hold before anyone multiplies them (damaged headers).
  long double total = 1;
  for (int i = 0; i < rank; ++i) total *= static_cast<long double>(dims[i]);
  if (total > static_cast<long double>(1ull << 50))
    KCPP_THROW(IOError, "Unable to read dataset \"", node->path, "\" in \"", file_name(),
               "\": implausible shape ", shape_str(shape), " (damaged file?)");
  std::string why;
  std::optional<DType> dtype = detail::dtype_of(node->type.get(), id, &why);
  return H5Dataset(std::move(node), std::move(shape), dtype.has_value(),
                   dtype.value_or(DType::float32), std::move(why));
}

void H5Group::throw_missing(std::string_view rel, const char* kind) const {
  std::string reason = node_->obj ? std::string() : detail::h5_error_text();
  std::string full = detail::join_path(path(), rel);
  std::string head = ::kerascpp::detail::concat("Unable to open ", kind, " \"", full, "\" in \"",
                                                file_name(), "\": ");
  // Find the first missing component to say exactly what is absent and what exists instead.
  std::string r(rel);
  size_t end = 0;
  while (end != std::string::npos) {
    end = r.find('/', end + 1);
    std::string prefix = r.substr(0, end);
    if (prefix.empty() || prefix.back() == '/') continue;
    if (has(prefix)) continue;
    size_t cut = prefix.rfind('/');
    std::string parent_rel = cut == std::string::npos ? "" : prefix.substr(0, cut);
    std::string child = prefix.substr(cut == std::string::npos ? 0 : cut + 1);
    std::string parent_path = detail::join_path(path(), parent_rel);
    if (!parent_rel.empty() && !is_group(parent_rel))
      KCPP_THROW(ValueError, head, "\"", parent_path, "\" is not a group");
    KCPP_THROW(ValueError, head, "group \"", parent_path, "\" has no member \"", child,
               "\"; its members are ", detail::name_list(group(parent_rel).members()));
  }
  bool want_group = std::string_view(kind) == "group";
  H5I_type_t found = kind_of(*this, *node_, rel);
  if (found == H5I_DATASET && want_group) KCPP_THROW(ValueError, head, "it is a dataset, not a group");
  if (found == H5I_GROUP && !want_group) KCPP_THROW(ValueError, head, "it is a group, not a dataset");
  if (found == H5I_DATATYPE) KCPP_THROW(ValueError, head, "it is a named datatype, not a ", kind);
  KCPP_THROW(IOError, head, reason.empty() ? "unknown error" : reason);
}

}  // namespace kerascpp::io
