#include "io/hdf5/hdf5_common.h"

#include <bit>
#include <cstring>

namespace kerascpp::io::detail {
namespace {

bool library_threadsafe() {
  static const bool threadsafe = [] {
    hbool_t ts = false;
    return H5is_library_threadsafe(&ts) >= 0 && ts;
  }();
  return threadsafe;
}

std::recursive_mutex& library_mutex() {
  static std::recursive_mutex m;
  return m;
}

herr_t keep_innermost(unsigned, const H5E_error2_t* e, void* out) {
  // Walking upward, the first entry is the innermost: the place that found the problem.
  auto* text = static_cast<std::string*>(out);
  if (text->empty() && e->desc && *e->desc) *text = e->desc;
  return 0;
}

// The in-memory vlen string types, made once and locked (immutable, closed by libhdf5 at exit):
// building one per read costs four API calls.
hid_t vlen_string_type(bool utf8) {
  auto make = [](H5T_cset_t cset) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, cset);
    H5Tlock(t);
    return t;
  };
  static const hid_t ascii = make(H5T_CSET_ASCII);
  static const hid_t unicode = make(H5T_CSET_UTF8);
  return utf8 ? unicode : ascii;
}

bool is_ieee_half(hid_t t) {
  size_t spos, epos, esize, mpos, msize;
  if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0) return false;
  return spos == 15 && epos == 10 && esize == 5 && mpos == 0 && msize == 10 && H5Tget_ebias(t) == 15;
}

// h5py writes numpy bool as an enum of int8 {FALSE = 0, TRUE = 1}.
bool is_bool_enum(hid_t t) {
  if (H5Tget_nmembers(t) != 2) return false;
  const char* want[2] = {"FALSE", "TRUE"};
  for (unsigned i = 0; i < 2; ++i) {
    char* name = H5Tget_member_name(t, i);
    int8_t value = -1;
    bool ok = name && std::strcmp(name, want[i]) == 0 && H5Tget_member_value(t, i, &value) >= 0 &&
              value == static_cast<int8_t>(i);
    H5free_memory(name);
    if (!ok) return false;
  }
  return true;
}

// Keras (3.0.5+) stores bfloat16 as 2-byte opaque data with the dataset attribute dtype="bfloat16".
bool has_bfloat16_marker(hid_t obj) {
  if (obj < 0 || H5Aexists(obj, "dtype") <= 0) return false;
  Hid attr(H5Aopen(obj, "dtype", H5P_DEFAULT));
  std::vector<std::string> s;
  std::string why;
  return attr.ok() && read_strings(attr.get(), 1 << 20, &s, &why) == StringsRead::ok &&
         s.size() == 1 && s[0] == "bfloat16";
}

std::string strip_padding(const char* p, size_t n, H5T_str_t pad) {
  if (pad == H5T_STR_NULLTERM) return std::string(p, strnlen(p, n));
  char fill = pad == H5T_STR_SPACEPAD ? ' ' : '\0';
  while (n > 0 && p[n - 1] == fill) --n;
  return std::string(p, n);
}

}  // namespace

H5Lock::H5Lock() {
  if (!library_threadsafe()) lock_ = std::unique_lock(library_mutex());
  thread_local bool silenced = false;
  if (!silenced) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    silenced = true;
  }
}

Hid& Hid::operator=(Hid&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    o.id_ = -1;
  }
  return *this;
}

void Hid::reset() {
  if (id_ >= 0) {
    H5Lock lock;
    H5Idec_ref(id_);
    id_ = -1;
  }
}

std::string h5_error_text() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &text);
  H5Eclear2(H5E_DEFAULT);
  return text;
}

std::string join_path(const std::string& parent, std::string_view rel) {
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  while (!rel.empty() && rel.back() == '/') rel.remove_suffix(1);
  if (rel.empty() || rel == ".") return parent;
  if (parent == "/") return std::string(rel);
  return parent + "/" + std::string(rel);
}

std::string name_list(const std::vector<std::string>& names, size_t max) {
  std::string s = "[";
  for (size_t i = 0; i < names.size() && i < max; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > max) s += ::kerascpp::detail::concat(", ... (", names.size() - max, " more)");
  return s + "]";
}

std::string describe_type(hid_t t) {
  using ::kerascpp::detail::concat;
  size_t size = H5Tget_size(t);
  switch (H5Tget_class(t)) {
    case H5T_INTEGER:
      return concat("a ", size, "-byte ", H5Tget_sign(t) == H5T_SGN_NONE ? "unsigned" : "signed",
                    " integer");
    case H5T_FLOAT: return concat("a ", size, "-byte float");
    case H5T_STRING:
      return H5Tis_variable_str(t) > 0 ? "a variable-length string"
                                       : concat("a ", size, "-byte fixed-length string");
    case H5T_OPAQUE: return concat("a ", size, "-byte opaque type");
    case H5T_ENUM: return concat("a ", size, "-byte enum");
    case H5T_COMPOUND: return "a compound type";
    case H5T_ARRAY: return "an array type";
    case H5T_VLEN: return "a variable-length sequence";
    case H5T_REFERENCE: return "a reference";
    case H5T_BITFIELD: return "a bitfield";
    default: return "an unknown type";
  }
}

std::optional<DType> dtype_of(hid_t type, hid_t obj, std::string* why) {
  size_t size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      if (size == 4) return DType::float32;
      if (size == 8) return DType::float64;
      if (size == 2 && is_ieee_half(type)) return DType::float16;
      break;
    case H5T_INTEGER: {
      bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
      if (size == 1) return is_signed ? DType::int8 : DType::uint8;
      if (is_signed && size == 4) return DType::int32;
      if (is_signed && size == 8) return DType::int64;
      break;
    }
    case H5T_ENUM:
      if (size == 1 && is_bool_enum(type)) return DType::bool_;
      break;
    case H5T_OPAQUE:
      if (size == 2 && has_bfloat16_marker(obj)) return DType::bfloat16;
      *why = describe_type(type) + " (bfloat16 needs the attribute dtype=\"bfloat16\")";
      return std::nullopt;
    default: break;
  }
  *why = describe_type(type);
  return std::nullopt;
}

hid_t memory_type(DType dtype, hid_t file_type, Hid* owned) {
  constexpr H5T_order_t native =
      std::endian::native == std::endian::little ? H5T_ORDER_LE : H5T_ORDER_BE;
  switch (dtype) {
    case DType::float32: return H5T_NATIVE_FLOAT;
    case DType::float64: return H5T_NATIVE_DOUBLE;
    case DType::int8: return H5T_NATIVE_INT8;
    case DType::uint8: return H5T_NATIVE_UINT8;
    case DType::int32: return H5T_NATIVE_INT32;
    case DType::int64: return H5T_NATIVE_INT64;
    case DType::float16:  // no native half type in libhdf5 1.10: the file's layout, native order
      *owned = Hid(H5Tcopy(file_type));
      if (owned->ok()) H5Tset_order(owned->get(), native);
      return owned->get();
    case DType::bool_:     // one byte: nothing to convert
    case DType::bfloat16:  // opaque: libhdf5 cannot convert it; Keras writes it little-endian
      return file_type;
  }
  return -1;
}

Hid file_type(DType dtype) {
  switch (dtype) {
    case DType::float32: return Hid(H5Tcopy(H5T_IEEE_F32LE));
    case DType::float64: return Hid(H5Tcopy(H5T_IEEE_F64LE));
    case DType::int8: return Hid(H5Tcopy(H5T_STD_I8LE));
    case DType::uint8: return Hid(H5Tcopy(H5T_STD_U8LE));
    case DType::int32: return Hid(H5Tcopy(H5T_STD_I32LE));
    case DType::int64: return Hid(H5Tcopy(H5T_STD_I64LE));
    case DType::float16: {  // built the way h5py builds IEEE_F16LE (h5py/h5t.pyx)
      Hid t(H5Tcopy(H5T_IEEE_F32BE));
      H5Tset_fields(t.get(), 15, 10, 5, 0, 10);
      H5Tset_size(t.get(), 2);
      H5Tset_ebias(t.get(), 15);
      H5Tset_order(t.get(), H5T_ORDER_LE);
      return t;
    }
    case DType::bool_: {
      Hid t(H5Tenum_create(H5T_NATIVE_INT8));
      int8_t no = 0, yes = 1;
      H5Tenum_insert(t.get(), "FALSE", &no);
      H5Tenum_insert(t.get(), "TRUE", &yes);
      return t;
    }
    case DType::bfloat16: return Hid(H5Tcreate(H5T_OPAQUE, 2));
  }
  return Hid();
}

StringsRead read_strings(hid_t attr, uint64_t file_size, std::vector<std::string>* out,
                         std::string* why) {
  out->clear();
  Hid type(H5Aget_type(attr));
  Hid space(H5Aget_space(attr));
  if (!type.ok() || !space.ok()) {
    *why = "its type or dataspace is unreadable (" + h5_error_text() + ")";
    return StringsRead::damaged;
  }
  hssize_t n = H5Sget_simple_extent_npoints(space.get());
  H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_STRING) {
    if (n == 0 && (cls == H5T_FLOAT || cls == H5T_INTEGER)) return StringsRead::ok;  // empty list
    *why = ::kerascpp::detail::concat(describe_type(type.get()), " array of ", n, " element(s)");
    return StringsRead::not_strings;
  }
  // Each string takes at least 16 bytes of the file (a vlen reference) or its fixed width: a
  // damaged dataspace claiming more would make libhdf5 allocate and clear it all.
  uint64_t width = std::max<uint64_t>(H5Tget_size(type.get()), 1);
  if (n < 0 || static_cast<uint64_t>(n) > file_size / std::min<uint64_t>(width, 16)) {
    *why = ::kerascpp::detail::concat("implausible dataspace (", n, " strings in a file of ",
                                      file_size, " bytes)");
    return StringsRead::damaged;
  }
  if (n == 0) return StringsRead::ok;
  if (H5Tis_variable_str(type.get()) > 0) {
    // Read with the file's character set: libhdf5 does not convert between ASCII and UTF-8, and
    // both hold UTF-8 bytes in Keras files.
    hid_t mem = vlen_string_type(H5Tget_cset(type.get()) == H5T_CSET_UTF8);
    std::vector<char*> ptrs(static_cast<size_t>(n), nullptr);
    if (H5Aread(attr, mem, ptrs.data()) < 0) {
      *why = h5_error_text();
      return StringsRead::damaged;
    }
    for (char* p : ptrs) out->emplace_back(p ? p : "");
#if H5_VERSION_GE(1, 12, 0)
    H5Treclaim(mem, space.get(), H5P_DEFAULT, ptrs.data());
#else
    H5Dvlen_reclaim(mem, space.get(), H5P_DEFAULT, ptrs.data());
#endif
    return StringsRead::ok;
  }
  std::vector<char> buf(width * static_cast<size_t>(n) + 1, '\0');
  if (H5Aread(attr, type.get(), buf.data()) < 0) {
    *why = h5_error_text();
    return StringsRead::damaged;
  }
  H5T_str_t pad = H5Tget_strpad(type.get());
  for (hssize_t i = 0; i < n; ++i) out->push_back(strip_padding(buf.data() + i * width, width, pad));
  return StringsRead::ok;
}

}  // namespace kerascpp::io::detail
