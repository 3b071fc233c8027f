// H5Object (attributes) and H5Dataset (reading data).
#include <string>

#include "io/hdf5/hdf5_common.h"
#include "io/hdf5/hdf5_file.h"
#include "io/hdf5/keras_h5_reader.h"

namespace kerascpp::io {

using detail::H5Lock;
using detail::Hid;

namespace {

std::string attr_head(std::string_view name, const std::string& path, const std::string& file) {
  return ::kerascpp::detail::concat("Unable to read attribute \"", name, "\" of \"", path, "\" in \"",
                                    file, "\": ");
}

// `head` makes the error's opening words, only when there is an error (a load reads a dozen attributes).
template <typename Head>
std::vector<std::string> strings_or_throw(detail::StringsRead r, std::vector<std::string> out,
                                          const std::string& why, const Head& head) {
  switch (r) {
    case detail::StringsRead::ok: break;
    case detail::StringsRead::not_strings:
      KCPP_THROW(ValueError, head(), "expected a string or a list of strings, found ", why);
    case detail::StringsRead::damaged: KCPP_THROW(IOError, head(), why);
  }
  return out;
}

}  // namespace

const std::string& H5Object::path() const { return node_->path; }
const std::string& H5Object::file_name() const { return node_->file->name; }

bool H5Object::has_attr(std::string_view name) const {
  if (node_->obj) return node_->obj->attr(name) != nullptr;
  H5Lock lock;
  htri_t r = H5Aexists(node_->id.get(), std::string(name).c_str());
  if (r < 0) detail::h5_error_text();
  return r > 0;
}

std::vector<std::string> H5Object::attr_names() const {
  std::vector<std::string> names;
  if (node_->obj) {
    for (const detail::kh5::Attr& a : node_->obj->attrs) names.emplace_back(a.name);
    return names;
  }
  H5Lock lock;
  auto add = [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->emplace_back(name);
    return 0;
  };
  if (H5Aiterate2(node_->id.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, add, &names) < 0)
    detail::throw_h5<IOError>("Unable to list the attributes of \"", path(), "\" in \"",
                              file_name(), "\"");
  return names;
}

std::vector<std::string> H5Object::attr_strings(std::string_view name) const {
  if (node_->obj) {
    const detail::kh5::Attr* a = node_->obj->attr(name);
    if (!a)
      KCPP_THROW(ValueError, attr_head(name, path(), file_name()),
                 "no such attribute; the attributes are ", detail::name_list(attr_names()));
    std::vector<std::string> out;
    std::string why;
    detail::StringsRead r = node_->file->fast->read_strings(*a, &out, &why);
    return strings_or_throw(r, std::move(out), why, [&] { return attr_head(name, path(), file_name()); });
  }
  H5Lock lock;
  return read_attr_strings(name, Hid(H5Aopen(node_->id.get(), std::string(name).c_str(), H5P_DEFAULT)));
}

// `attr` is the attribute `name`, or a failed open of it.
std::vector<std::string> H5Object::read_attr_strings(std::string_view name, detail::Hid attr) const {
  std::string head = attr_head(name, path(), file_name());
  if (!attr.ok()) {
    std::string reason = detail::h5_error_text();  // before any other call clears it
    if (!has_attr(name))
      KCPP_THROW(ValueError, head, "no such attribute; the attributes are ",
                 detail::name_list(attr_names()));
    KCPP_THROW(IOError, head, "cannot open it: ", reason);
  }
  std::vector<std::string> out;
  std::string why;
  detail::StringsRead r = detail::read_strings(attr.get(), node_->file->size, &out, &why);
  return strings_or_throw(r, std::move(out), why, [&] { return head; });
}

std::string H5Object::attr_string(std::string_view name) const {
  std::vector<std::string> s = attr_strings(name);
  if (s.size() != 1)
    KCPP_THROW(ValueError, "Unable to read attribute \"", name, "\" of \"", path(), "\" in \"",
               file_name(), "\": expected one string, found ",
               s.empty() ? std::string("an empty list") : "a list of " + std::to_string(s.size()));
  return std::move(s[0]);
}

std::vector<std::string> H5Object::attr_strings_split(std::string_view name) const {
  std::string base(name);
  if (node_->obj) {
    if (has_attr(name)) return attr_strings(name);
  } else {
    H5Lock lock;
    // Open directly rather than ask first: the unsplit attribute is the common case.
    Hid whole(H5Aopen(node_->id.get(), base.c_str(), H5P_DEFAULT));
    if (whole.ok()) return read_attr_strings(name, std::move(whole));
    detail::h5_error_text();
  }
  if (!has_attr(base + "0"))
    KCPP_THROW(ValueError, "Unable to read attribute \"", name, "\" of \"", path(), "\" in \"",
               file_name(), "\": neither \"", name, "\" nor \"", name,
               "0\" exists; the attributes are ", detail::name_list(attr_names()));
  std::vector<std::string> all;
  for (int i = 0; has_attr(base + std::to_string(i)); ++i) {
    std::vector<std::string> part = attr_strings(base + std::to_string(i));
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

DType H5Dataset::dtype() const {
  if (!dtype_ok_)
    KCPP_THROW(NotImplementedError, "Unable to read dataset \"", path(), "\" in \"", file_name(),
               "\": its HDF5 type, ", type_text_, ", has no kerascpp dtype");
  return dtype_;
}

size_t H5Dataset::nbytes() const {
  return static_cast<size_t>(shape_size(shape_)) * dtype_size(dtype());
}

void H5Dataset::read_into(void* dst, size_t nbytes) const {
  size_t want = this->nbytes();
  if (nbytes != want)
    KCPP_THROW(ValueError, "Unable to read dataset \"", path(), "\" in \"", file_name(),
               "\": the destination holds ", nbytes, " bytes but the dataset holds ", want,
               " (shape ", shape_str(shape_), ", ", dtype_name(dtype_), ")");
  if (want == 0) return;
  if (node_->obj) {
    std::string why;
    if (const FileMapping* m = node_->file->mapping.get()) {  // the bytes lie in a file mapping
      if (const char* p = node_->file->fast->bytes(*node_->obj, want, &why)) {
        try {
          return m->copy(p, want, dst);
        } catch (const IOError& e) {  // the file shrank or failed while being read
          KCPP_THROW(IOError, "Unable to read dataset \"", path(), "\": ", e.what());
        }
      }
      if (!why.empty())
        KCPP_THROW(IOError, "Unable to read dataset \"", path(), "\" in \"", file_name(), "\": ", why);
    }
    why = node_->file->fast->read(*node_->obj, dst, want);
    if (!why.empty())
      KCPP_THROW(IOError, "Unable to read dataset \"", path(), "\" in \"", file_name(), "\": ", why);
    return;
  }
  H5Lock lock;
  hid_t id = node_->id.get();
  // libhdf5 1.10 copies compact data without comparing its stored size with the dataspace: a
  // damaged layout message would make it read past its buffer. Valid data is either all stored,
  // not stored at all (read as the fill value), or compressed in chunks.
  hsize_t stored = H5Dget_storage_size(id);
  if (stored != 0 && stored < want) {
    Hid dcpl(H5Dget_create_plist(id));
    if (!dcpl.ok() || H5Pget_layout(dcpl.get()) != H5D_CHUNKED)
      KCPP_THROW(IOError, "Unable to read dataset \"", path(), "\" in \"", file_name(),
                 "\": it stores ", stored, " bytes but its shape ", shape_str(shape_), " needs ",
                 want, " (damaged file?)");
  }
  Hid owned;
  hid_t mem_type = detail::memory_type(dtype_, node_->type.get(), &owned);
  if (mem_type < 0 || H5Dread(id, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, dst) < 0)
    detail::throw_h5<IOError>("Unable to read dataset \"", path(), "\" in \"", file_name(), "\"");
}

Tensor H5Dataset::view() const {
  const detail::H5FileState& file = *node_->file;
  if (!node_->obj || !file.mapping || !file.mapping->writable() || !dtype_ok_) return {};
  const size_t n = nbytes();
  if (n == 0) return {};
  std::string why;
  const char* p = file.fast->bytes(*node_->obj, n, &why);
  if (!why.empty()) KCPP_THROW(IOError, "Unable to read dataset \"", path(), "\" in \"", file_name(), "\": ", why);
  if (!p || reinterpret_cast<uintptr_t>(p) % dtype_size(dtype_) != 0) return {};
  // The mapping is private and writable: a write copies the page (file_mapping.h).
  auto storage = Storage::wrap(const_cast<char*>(p), n, file.mapping);
  return Tensor::from_storage(std::move(storage), shape_, dtype_);
}

Tensor H5Dataset::read() const {
  size_t n = nbytes();
  // Unfiltered data cannot be larger than its file; refuse before allocating for a damaged header.
  if (n > node_->file->size && node_->obj)
    KCPP_THROW(IOError, "Unable to read dataset \"", path(), "\" in \"", file_name(), "\": its shape ",
               shape_str(shape_), " needs ", n, " bytes but the file holds only ", node_->file->size,
               " (damaged file?)");
  if (n > node_->file->size && !node_->obj) {
    H5Lock lock;
    Hid dcpl(H5Dget_create_plist(node_->id.get()));
    if (dcpl.ok() && H5Pget_nfilters(dcpl.get()) == 0)
      KCPP_THROW(IOError, "Unable to read dataset \"", path(), "\" in \"", file_name(),
                 "\": its shape ", shape_str(shape_), " needs ", n, " bytes but the file holds only ",
                 node_->file->size, " (damaged file?)");
  }
  Tensor t = Tensor::empty(shape_, dtype_);
  read_into(t.raw_data(), n);
  return t;
}

}  // namespace kerascpp::io
