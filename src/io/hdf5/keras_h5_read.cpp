// kh5::File after parsing: navigation, attribute strings (global heap), dtypes and data.
#include <algorithm>
#include <cstring>

#include "io/hdf5/keras_h5_reader.h"

namespace kerascpp::io::detail::kh5 {
namespace {

using ::kerascpp::detail::concat;

uint64_t get(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}

std::string strip_padding(const char* p, size_t n, uint8_t pad) {
  if (pad == 0) return std::string(p, strnlen(p, n));  // NULLTERM
  char fill = pad == 2 ? ' ' : '\0';                    // SPACEPAD : NULLPAD
  while (n > 0 && p[n - 1] == fill) --n;
  return std::string(p, n);
}

// The objects of the global heap collection ("GCOL") at `addr`, checked the way libhdf5 walks them.
std::string load_collection(const char* data, uint64_t size, uint64_t addr, HeapCollection* c) {
  c->objects.clear();
  auto bad = [&] { return concat("damaged global heap collection at address ", addr); };
  if (addr > size || size - addr < 16 || std::memcmp(data + addr, "GCOL\1", 5) != 0) return bad();
  uint64_t n = get(data + addr + 8, 8);
  if (n < 16 || n > size - addr) return bad();
  c->bytes = n;
  const char* p = data + addr;
  // The objects' largest index first, so that the table is made once (a Keras file's collection holds
  // every string attribute of the file, read again for each attribute; growing it one index at a
  // time cost a dozen allocations a read).
  // An object's bytes with its header: the free space (index 0) is `len` bytes in all.
  auto need = [](uint64_t index, uint64_t len) { return index ? 16 + ((len + 7) & ~uint64_t{7}) : len; };
  uint64_t top = 0;
  for (uint64_t at = 16; n - at >= 16;) {
    uint64_t index = get(p + at, 2), len = get(p + at + 8, 8);
    if (len > n - at || need(index, len) == 0 || need(index, len) > n - at) return bad();
    top = std::max(top, index);
    at += need(index, len);
  }
  c->objects.assign(top + 1, {nullptr, 0});
  for (uint64_t at = 16; n - at >= 16;) {  // the same walk, checked above
    uint64_t index = get(p + at, 2), len = get(p + at + 8, 8);
    if (index) c->objects[index] = {p + at + 16, len};
    at += need(index, len);
  }
  return "";
}

}  // namespace

const Attr* Object::attr(std::string_view name) const {
  auto it = std::lower_bound(attrs.begin(), attrs.end(), name,
                             [](const Attr& a, std::string_view n) { return a.name < n; });
  return it != attrs.end() && it->name == name ? &*it : nullptr;
}

const Object* Object::member(std::string_view name, const std::vector<Object>& all) const {
  if (kind != Kind::group) return nullptr;
  if (sorted) {
    auto it = std::lower_bound(members.begin(), members.end(), name,
                               [](const auto& m, std::string_view n) { return m.first < n; });
    return it != members.end() && it->first == name ? &all[it->second] : nullptr;
  }
  for (const auto& m : members)
    if (m.first == name) return &all[m.second];
  return nullptr;
}

const Object* File::find(const Object& from, std::string_view rel) const {
  const Object* o = rel.starts_with('/') ? &root() : &from;
  while (!rel.empty()) {
    size_t cut = rel.find('/');
    std::string_view part = rel.substr(0, cut);
    rel = cut == std::string_view::npos ? std::string_view() : rel.substr(cut + 1);
    if (part.empty() || part == ".") {
      if (o->kind != Object::Kind::group) return nullptr;
      continue;
    }
    o = o->member(part, objects_);
    if (!o) return nullptr;
  }
  return o;
}

std::string describe(const Type& t) {
  switch (t.cls) {
    case 0: return concat("a ", t.size, "-byte ", t.is_signed ? "signed" : "unsigned", " integer");
    case 1: return concat("a ", t.size, "-byte float");
    case 3: return concat("a ", t.size, "-byte fixed-length string");
    case 4: return "a bitfield";
    case 5: return concat("a ", t.size, "-byte opaque type");
    case 6: return "a compound type";
    case 7: return "a reference";
    case 8: return concat("a ", t.size, "-byte enum");
    case 9: return t.vlen_string ? "a variable-length string" : "a variable-length sequence";
    case 10: return "an array type";
    default: return "an unknown type";
  }
}

StringsRead File::read_strings(const Attr& a, std::vector<std::string>* out, std::string* why, HeapCache* heaps) const {
  if (out) out->clear();
  uint64_t n = a.space.points;  // bounded by the attribute's bytes at parse time
  bool is_string = a.type.cls == 3 || (a.type.cls == 9 && a.type.vlen_string);
  if (!is_string) {
    if (n == 0 && (a.type.cls == 0 || a.type.cls == 1)) return StringsRead::ok;  // empty list
    *why = concat(describe(a.type), " array of ", n, " element(s)");
    return StringsRead::not_strings;
  }
  if (a.type.cls == 3) {
    if (!out) return StringsRead::ok;
    out->reserve(n);
    for (uint64_t i = 0; i < n; ++i) out->push_back(strip_padding(a.data + i * a.type.size, a.type.size, a.type.pad));
    return StringsRead::ok;
  }
  // Bounded by the file: each collection is walked once, the collections walked may not total more
  // bytes than the file (they overlap otherwise), nor the strings read (one heap object referenced
  // again and again would multiply them).
  std::unique_lock<std::mutex> lock(heaps_mutex_, std::defer_lock);
  if (!heaps) lock.lock();
  HeapCache& cache = heaps ? *heaps : heaps_;
  if (out) out->reserve(n);
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const char* e = a.data + 16 * i;
    uint64_t len = get(e, 4), addr = get(e + 4, 8), index = get(e + 12, 4);
    if (addr == 0 || len == 0) {  // a null or empty string
      if (out) out->emplace_back();
      continue;
    }
    auto [it, added] = cache.collections.try_emplace(addr);
    if (added) {
      *why = load_collection(data_, size_, addr, &it->second);
      if (why->empty() && it->second.bytes > size_ - cache.bytes)
        *why = concat("global heap collections overlapping at address ", addr);
      if (!why->empty()) {
        cache.collections.erase(it);
        return StringsRead::damaged;
      }
      cache.bytes += it->second.bytes;
    }
    const HeapCollection& heap = it->second;
    if (index >= heap.objects.size() || !heap.objects[index].first || heap.objects[index].second < len) {
      *why = concat("damaged global heap collection at address ", addr, ": no object ", index, " of ",
                    len, " bytes");
      return StringsRead::damaged;
    }
    if (!out) continue;
    const char* p = heap.objects[index].first;
    const size_t chars = strnlen(p, len);  // as libhdf5 hands out C strings
    total += chars;
    if (total > size_) {
      *why = concat("the strings total more bytes than the file's ", size_, " (heap objects referenced again and again)");
      return StringsRead::damaged;
    }
    out->emplace_back(p, chars);
  }
  return StringsRead::ok;
}

std::optional<DType> File::dtype_of(const Object& d, std::string* why) const {
  const Type& t = d.type;
  switch (t.cls) {
    case 1:
      if (t.size == 4) return DType::float32;
      if (t.size == 8) return DType::float64;
      if (t.ieee_half) return DType::float16;
      break;
    case 0:
      if (t.size == 1) return t.is_signed ? DType::int8 : DType::uint8;
      if (t.is_signed && t.size == 4) return DType::int32;
      if (t.is_signed && t.size == 8) return DType::int64;
      break;
    case 8:
      if (t.bool_enum) return DType::bool_;
      break;
    case 5: {
      std::vector<std::string> s;
      std::string ignored;
      const Attr* marker = d.attr("dtype");
      if (t.size == 2 && marker && read_strings(*marker, &s, &ignored) == StringsRead::ok &&
          s.size() == 1 && s[0] == "bfloat16")
        return DType::bfloat16;
      *why = describe(t) + " (bfloat16 needs the attribute dtype=\"bfloat16\")";
      return std::nullopt;
    }
    default: break;
  }
  *why = describe(t);
  return std::nullopt;
}

std::string File::read(const Object& d, void* dst, size_t nbytes) const {
  if (d.storage == Object::Storage::none) {
    std::memset(dst, 0, nbytes);  // never written: zeros (parse refused any other fill value)
    return "";
  }
  std::string why = stored_ok(d, nbytes);
  if (why.empty()) std::memcpy(dst, data_ + d.addr, nbytes);
  return why;
}

const char* File::bytes(const Object& d, size_t nbytes, std::string* why) const {
  if (d.storage != Object::Storage::contiguous) return nullptr;
  *why = stored_ok(d, nbytes);
  return why->empty() ? data_ + d.addr : nullptr;
}

std::string File::stored_ok(const Object& d, size_t nbytes) const {
  if (d.stored < nbytes)
    return concat("it stores ", d.stored, " bytes but its shape needs ", nbytes, " (damaged file?)");
  if (d.addr > size_ || nbytes > size_ - d.addr)
    return concat("its ", nbytes, " bytes at address ", d.addr, " run past the end of the file (", size_,
                  " bytes)");
  return "";
}

}  // namespace kerascpp::io::detail::kh5
