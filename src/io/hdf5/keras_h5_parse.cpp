// kh5::File::parse: the open-time walk of a Keras-subset HDF5 file (see keras_h5_reader.h).
// Format reference: the HDF5 File Format Specification version 3.0, sections II-IV.
#include <algorithm>
#include <cstring>

#include "io/hdf5/keras_h5_reader.h"

namespace kerascpp::io::detail::kh5 {
namespace {

using ::kerascpp::detail::concat;

constexpr uint64_t kUndef = ~uint64_t{0};
constexpr char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};

struct Damage {
  std::string reason;
};
struct Unsupported {
  std::string reason;
};

template <typename... Args>
[[noreturn]] void damaged(const Args&... args) {
  throw Damage{concat(args...)};
}
template <typename... Args>
[[noreturn]] void unsupported(const Args&... args) {
  throw Unsupported{concat(args...)};
}

uint64_t pad8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// A bounds-checked little-endian view of bytes.
struct Span {
  const uint8_t* p = nullptr;
  uint64_t n = 0;

  void need(uint64_t at, uint64_t len, const char* what) const {
    if (at > n || len > n - at) damaged(what, " runs past the end of its block (", len, " bytes at ", at, " of ", n, ")");
  }
  uint64_t get(uint64_t at, int bytes, const char* what) const {
    need(at, static_cast<uint64_t>(bytes), what);
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[at + i];
    return v;
  }
  uint8_t u8(uint64_t at, const char* what) const { return static_cast<uint8_t>(get(at, 1, what)); }
  uint16_t u16(uint64_t at, const char* what) const { return static_cast<uint16_t>(get(at, 2, what)); }
  uint32_t u32(uint64_t at, const char* what) const { return static_cast<uint32_t>(get(at, 4, what)); }
  uint64_t u64(uint64_t at, const char* what) const { return get(at, 8, what); }
  Span sub(uint64_t at, uint64_t len, const char* what) const {
    need(at, len, what);
    return {p + at, len};
  }
  Span from(uint64_t at, const char* what) const { return sub(at, at <= n ? n - at : 1, what); }
  bool starts(const char* sig, size_t len) const { return n >= len && std::memcmp(p, sig, len) == 0; }
};

bool std_float(const Type& t, uint32_t bits, Span s) {
  int spos = (bits >> 8) & 0xFF;
  uint16_t off = s.u16(8, "float"), prec = s.u16(10, "float");
  uint8_t epos = s.u8(12, "float"), esize = s.u8(13, "float"), mpos = s.u8(14, "float"),
          msize = s.u8(15, "float");
  uint32_t bias = s.u32(16, "float");
  struct F { uint32_t size; int spos, epos, esize, msize; uint32_t bias; };
  for (F f : {F{2, 15, 10, 5, 10, 15}, F{4, 31, 23, 8, 23, 127}, F{8, 63, 52, 11, 52, 1023}})
    if (t.size == f.size)
      return off == 0 && prec == 8 * f.size && spos == f.spos && epos == f.epos && esize == f.esize &&
             mpos == 0 && msize == f.msize && bias == f.bias && ((bits >> 4) & 3) == 2;
  return false;
}

// A datatype message; *used gets its length where the class defines one (0 otherwise).
Type parse_type(Span s, uint64_t* used = nullptr, int depth = 0) {
  if (depth > 4) damaged("datatype nested too deep");
  uint8_t b0 = s.u8(0, "datatype");
  uint32_t bits = s.u8(1, "datatype") | s.u8(2, "datatype") << 8 | s.u8(3, "datatype") << 16;
  Type t;
  t.cls = b0 & 0x0F;
  t.size = s.u32(4, "datatype");
  int version = b0 >> 4;
  if (version < 1 || version > 5 || t.cls > 10) damaged("unknown datatype (version ", version, ", class ", int(t.cls), ")");
  if (t.size == 0) damaged("datatype of size 0");
  uint64_t len = 0;
  switch (t.cls) {
    case 0: {  // integer
      t.is_signed = bits & 8;
      uint16_t off = s.u16(8, "integer type"), prec = s.u16(10, "integer type");
      t.foreign = ((bits & 1) && t.size > 1) || off != 0 || prec != 8 * t.size;
      len = 12;
      break;
    }
    case 1:  // float: byte order bits 0 and 6 (VAX)
    {
      bool big = (bits & 0x41) != 0, standard = std_float(t, bits, s);
      t.ieee_half = t.size == 2 && standard && !big;
      // libhdf5 converts these; other sizes and non-IEEE halves it refuses, as kerascpp does
      t.foreign = big || ((t.size == 4 || t.size == 8) && !standard);
      len = 20;
      break;
    }
    case 3:  // fixed-length string
      t.pad = bits & 0x0F;
      len = 8;
      break;
    case 5: len = 8 + (bits & 0xFF); break;  // opaque: tag
    case 8: {  // enum
      uint64_t base_len = 0;
      Type base = parse_type(s.from(8, "enum type"), &base_len, depth + 1);
      if (base.cls != 0 || base.size != t.size || base_len == 0) damaged("enum with a non-integer base");
      uint32_t n = bits & 0xFFFF;
      uint64_t at = 8 + base_len;
      std::vector<std::string> names;
      for (uint32_t i = 0; i < n; ++i) {
        Span rest = s.from(at, "enum names");
        const void* nul = std::memchr(rest.p, 0, rest.n);
        if (!nul) damaged("unterminated enum member name");
        uint64_t nl = static_cast<const uint8_t*>(nul) - rest.p;
        if (i < 2) names.emplace_back(reinterpret_cast<const char*>(rest.p), nl);
        at += version >= 3 ? nl + 1 : pad8(nl + 1);
      }
      Span values = s.sub(at, uint64_t{n} * t.size, "enum values");
      t.bool_enum = t.size == 1 && n == 2 && names[0] == "FALSE" && names[1] == "TRUE" &&
                    values.p[0] == 0 && values.p[1] == 1;
      len = at + values.n;
      break;
    }
    case 9: {  // variable-length: sequence (0) or string (1)
      t.vlen_string = (bits & 0x0F) == 1;
      if (t.size != 16) damaged("variable-length type of size ", t.size);
      uint64_t base_len = 0;
      parse_type(s.from(8, "vlen base type"), &base_len, depth + 1);
      len = base_len ? 8 + base_len : 0;
      break;
    }
    default: break;  // time, bitfield, compound, reference, array: described, never read
  }
  if (len) s.need(0, len, "datatype");
  if (used) *used = len;
  return t;
}

Space parse_space(Span s) {
  Space sp;
  uint8_t version = s.u8(0, "dataspace"), rank = s.u8(1, "dataspace"), flags = s.u8(2, "dataspace");
  uint64_t at;
  if (version == 1) {
    at = 8;
  } else if (version == 2) {
    uint8_t type = s.u8(3, "dataspace");
    if (type > 2) damaged("unknown dataspace type ", int(type));
    sp.null = type == 2;
    if (type != 1 && rank != 0) damaged("scalar or null dataspace of rank ", int(rank));
    at = 4;
  } else {
    damaged("unknown dataspace version ", int(version));
  }
  if (rank > 32) damaged("dataspace of rank ", int(rank));
  if (flags & 1) s.need(at, uint64_t{rank} * 16, "dataspace");
  sp.points = sp.null ? 0 : 1;
  for (int i = 0; i < rank; ++i) {
    uint64_t d = s.u64(at + 8 * i, "dataspace");
    sp.dims.push_back(d);
    if (__builtin_mul_overflow(sp.points, d, &sp.points)) sp.points = ~uint64_t{0};
  }
  return sp;
}

// Addresses seen, each with a value: open addressing, no allocation per entry.
class AddrTable {
 public:
  // The value stored for addr, or `value` newly stored; *added says which.
  uint32_t insert(uint64_t addr, uint32_t value, bool* added) {
    if (2 * (count_ + 1) > keys_.size()) grow();
    size_t mask = keys_.size() - 1;
    for (size_t i = hash(addr) & mask;; i = (i + 1) & mask) {
      if (keys_[i] == addr && used_[i]) return *added = false, values_[i];
      if (!used_[i]) {
        keys_[i] = addr, values_[i] = value, used_[i] = 1, ++count_;
        return *added = true, value;
      }
    }
  }

 private:
  static size_t hash(uint64_t a) { return static_cast<size_t>((a * 0x9E3779B97F4A7C15ull) >> 20); }
  void grow() {
    std::vector<uint64_t> keys = std::move(keys_);
    std::vector<uint32_t> values = std::move(values_);
    std::vector<uint8_t> used = std::move(used_);
    size_t n = keys.empty() ? 128 : 2 * keys.size();
    keys_.assign(n, 0), values_.assign(n, 0), used_.assign(n, 0), count_ = 0;
    bool added;
    for (size_t i = 0; i < keys.size(); ++i)
      if (used[i]) insert(keys[i], values[i], &added);
  }
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> values_;
  std::vector<uint8_t> used_;
  size_t count_ = 0;
};

struct Origin {
  uint64_t addr;          // object header
  uint32_t parent;        // the group through which the object was first reached
  std::string_view name;  // its name there
};

struct Walker {
  Span file;
  std::vector<Object>* objects;
  AddrTable index;  // object header address -> object
  AddrTable nodes;  // B-tree / symbol nodes / continuation blocks seen
  std::vector<Origin> todo;  // per object, in order
  std::vector<Span> blocks;  // of the object header being parsed
  uint32_t current = 0;      // the object being parsed
  std::string outside;       // the first construct found outside the subset ("" if none)

  bool skipped = false;       // the object being parsed has a message outside the subset
  std::string_view unread;    // a member of the root group not walked (File::parse)

  template <typename... Args>
  void note(const Args&... args) {
    if (outside.empty()) outside = concat(args...);
  }
  // A message outside the subset: noted, and the rest of the object header is still read (its
  // attributes and symbol table checked) but not what the object is.
  template <typename... Args>
  void skip(const Args&... args) {
    note(args...);
    skipped = true;
  }

  void visit_once(uint64_t addr, const char* what) {
    bool added;
    nodes.insert(addr, 0, &added);
    if (!added) damaged(what, " at address ", addr, " is reached twice (a cycle)");
  }

  // The path of an object, for messages only.
  std::string path_of(uint32_t id) const {
    std::string p;
    for (int hops = 0; id != 0 && hops < 256; ++hops, id = todo[id].parent)
      p = std::string(todo[id].name) + (p.empty() ? "" : "/") + p;
    return p.empty() ? "/" : p;
  }
  std::string path() const { return path_of(current); }

  Attr parse_attr(Span m) {
    Attr a;
    uint8_t version = m.u8(0, "attribute");
    uint16_t name_len = m.u16(2, "attribute"), dt_len = m.u16(4, "attribute"), ds_len = m.u16(6, "attribute");
    if (version < 1 || version > 3) damaged("unknown attribute message version ", int(version));
    if (version > 1 && m.u8(1, "attribute") != 0) unsupported("an attribute with a shared datatype or dataspace");
    auto step = [&](uint64_t n) { return version == 1 ? pad8(n) : n; };
    uint64_t at = version == 3 ? 9 : 8;
    Span name = m.sub(at, name_len, "attribute name");
    a.name = std::string_view(reinterpret_cast<const char*>(name.p), strnlen(reinterpret_cast<const char*>(name.p), name.n));
    at += step(name_len);
    a.type = parse_type(m.sub(at, dt_len, "attribute datatype"));
    at += step(dt_len);
    a.space = parse_space(m.sub(at, ds_len, "attribute dataspace"));
    at += step(ds_len);
    Span rest = m.from(at, "attribute data");
    if (a.space.points > rest.n / a.type.size)
      damaged("attribute \"", a.name, "\" holds ", a.space.points, " elements of ", a.type.size,
              " bytes in ", rest.n, " bytes");
    a.data = reinterpret_cast<const char*>(rest.p);
    return a;
  }

  bool fill_is_zero(Span m, uint16_t type) {
    uint64_t at;
    if (type == 4) {
      at = 0;
    } else {
      uint8_t version = m.u8(0, "fill value");
      if (version == 3) {
        if (!(m.u8(1, "fill value") & 0x20)) return true;
        at = 2;
      } else {
        if (version == 2 && !m.u8(3, "fill value")) return true;
        at = 4;
      }
    }
    Span v = m.sub(at + 4, m.u32(at, "fill value"), "fill value");
    return std::all_of(v.p, v.p + v.n, [](uint8_t b) { return b == 0; });
  }

  void parse_object(uint32_t id, uint64_t addr) {
    Span head = file.sub(addr, 16, "object header");
    if (head.starts("OHDR", 4)) unsupported("a version-2 object header at \"", path(), "\"");
    if (head.u8(0, "object header") != 1) damaged("not an object header (version ", int(head.p[0]), ")");
    blocks.assign(1, file.sub(addr + 16, head.u32(8, "object header"), "object header"));
    Object o;
    skipped = false;
    bool has_type = false, has_space = false, has_layout = false, has_symtab = false, fill_zero = true;
    uint64_t btree = 0, heap = 0;
    for (size_t b = 0; b < blocks.size(); ++b) {
      Span blk = blocks[b];
      for (uint64_t at = 0; blk.n - at >= 8;) {
        uint16_t type = blk.u16(at, "message"), size = blk.u16(at + 2, "message");
        uint8_t flags = blk.u8(at + 4, "message");
        Span m = blk.sub(at + 8, size, "message");
        at += 8 + uint64_t{size};
        if (flags & 2) {
          skip("a shared message (type ", type, ") at \"", path(), "\"");
          continue;
        }
        switch (type) {
          case 0x00: case 0x0D: case 0x0E: case 0x12: case 0x16: break;  // nil, comment, times, refcount
          case 0x01:
            if (!has_space) o.space = parse_space(m);
            has_space = true;
            break;
          case 0x03:
            if (!has_type) o.type = parse_type(m);
            has_type = true;
            break;
          case 0x04: case 0x05: fill_zero = fill_zero && fill_is_zero(m, type); break;
          case 0x08: {
            if (has_layout) break;
            has_layout = true;
            uint8_t version = m.u8(0, "layout"), cls = m.u8(1, "layout");
            if (version < 3) {
              skip("a version-", int(version), " layout message at \"", path(), "\"");
              break;
            }
            if (version > 4) damaged("unknown layout message version ", int(version));
            if (cls == 0 && version == 3) {
              o.storage = Object::Storage::compact;
              o.stored = m.u16(2, "layout");
              o.addr = static_cast<uint64_t>(m.sub(4, o.stored, "compact data").p - file.p);
            } else if (cls == 1 && version == 3) {
              o.addr = m.u64(2, "layout");
              o.stored = m.u64(10, "layout");
              o.storage = o.addr == kUndef ? Object::Storage::none : Object::Storage::contiguous;
            } else if (cls <= 3) {
              skip("chunked or virtual storage at \"", path(), "\"");
            } else {
              damaged("unknown layout class ", int(cls));
            }
            break;
          }
          case 0x0C:
            try {
              o.attrs.push_back(parse_attr(m));
            } catch (const Unsupported& u) {
              skip(u.reason);
            }
            break;
          case 0x10: {
            uint64_t at2 = m.u64(0, "continuation");
            visit_once(at2, "object header continuation");
            blocks.push_back(file.sub(at2, m.u64(8, "continuation"), "object header continuation"));
            break;
          }
          case 0x11:
            has_symtab = true;
            btree = m.u64(0, "symbol table message");
            heap = m.u64(8, "symbol table message");
            break;
          case 0x02: case 0x06: case 0x0A: skip("a new-style group (link messages) at \"", path(), "\""); break;
          case 0x0B: skip("a filtered dataset at \"", path(), "\""); break;
          case 0x07: skip("external data files at \"", path(), "\""); break;
          case 0x15: skip("dense attribute storage at \"", path(), "\""); break;
          case 0x09: case 0x0F: case 0x13: case 0x14: case 0x17:
            skip("header message type ", type, " at \"", path(), "\"");
            break;
          default: damaged("unknown header message type ", type);
        }
      }
    }
    std::stable_sort(o.attrs.begin(), o.attrs.end(), [](const Attr& a, const Attr& b) { return a.name < b.name; });
    if (has_symtab && !has_layout) {
      o.kind = Object::Kind::group;
      (*objects)[id] = std::move(o);
      read_group(id, btree, heap);
      return;
    }
    if (skipped) {  // its attributes are kept for the checks before libhdf5; what it is, libhdf5 knows
      (*objects)[id] = std::move(o);
      return;
    }
    if (!has_layout || has_symtab) {
      if (!has_type || has_space || has_symtab) damaged("neither a group nor a dataset");
      note("a named datatype at \"", path(), "\"");
      (*objects)[id] = std::move(o);
      return;
    }
    if (!has_type || !has_space) damaged("a dataset without a datatype or dataspace");
    if (o.type.foreign && (o.type.cls == 0 || o.type.cls == 1))
      note("big-endian or non-IEEE numbers at \"", path(), "\"");
    if (o.storage == Object::Storage::none && !fill_zero)
      note("an unwritten dataset with a fill value at \"", path(), "\"");
    o.kind = Object::Kind::dataset;
    (*objects)[id] = std::move(o);
  }

  void read_group(uint32_t id, uint64_t btree, uint64_t heap_addr) {
    Span heap = file.sub(heap_addr, 32, "local heap");
    if (!heap.starts("HEAP", 4) || heap.u8(4, "local heap") != 0) damaged("bad local heap signature");
    Span names = file.sub(heap.u64(24, "local heap"), heap.u64(8, "local heap"), "local heap data");
    std::vector<std::pair<std::string_view, uint32_t>> members;
    walk_btree(btree, -1, names, &members);
    Object& g = (*objects)[id];
    g.members = std::move(members);
    for (size_t i = 1; i < g.members.size(); ++i)
      if (!(g.members[i - 1].first < g.members[i].first)) g.sorted = false;
  }

  void walk_btree(uint64_t addr, int level, Span names, std::vector<std::pair<std::string_view, uint32_t>>* out) {
    visit_once(addr, "B-tree node");
    Span node = file.sub(addr, 24, "B-tree node");
    if (!node.starts("TREE", 4) || node.u8(4, "B-tree node") != 0) damaged("bad B-tree node at address ", addr);
    int node_level = node.u8(5, "B-tree node");
    if (level >= 0 && node_level != level) damaged("B-tree node at address ", addr, " has level ", node_level);
    uint16_t n = node.u16(6, "B-tree node");
    Span body = file.sub(addr + 24, uint64_t{n} * 16 + 8, "B-tree node");
    for (uint16_t i = 0; i < n; ++i) {
      uint64_t child = body.u64(8 + 16 * uint64_t{i}, "B-tree node");
      if (node_level > 0)
        walk_btree(child, node_level - 1, names, out);
      else
        read_symbols(child, names, out);
    }
  }

  void read_symbols(uint64_t addr, Span names, std::vector<std::pair<std::string_view, uint32_t>>* out) {
    visit_once(addr, "symbol table node");
    Span node = file.sub(addr, 8, "symbol table node");
    if (!node.starts("SNOD", 4) || node.u8(4, "symbol table node") != 1)
      damaged("bad symbol table node at address ", addr);
    uint16_t n = node.u16(6, "symbol table node");
    Span entries = file.sub(addr + 8, uint64_t{n} * 40, "symbol table node");
    for (uint16_t i = 0; i < n; ++i) {
      Span e = entries.sub(40 * uint64_t{i}, 40, "symbol table entry");
      Span name = names.from(e.u64(0, "symbol table entry"), "link name");
      const void* nul = std::memchr(name.p, 0, name.n);
      if (!nul) damaged("unterminated link name in the local heap");
      std::string_view s(reinterpret_cast<const char*>(name.p), static_cast<const uint8_t*>(nul) - name.p);
      if (s.empty() || s == "." || s.find('/') != s.npos) damaged("invalid link name \"", s, "\"");
      uint32_t cache = e.u32(16, "symbol table entry");
      if (cache == 2) {  // its target is a path: not followed, the other members still are
        note("a soft link \"", s, "\" in \"", path(), "\"");
        continue;
      }
      if (cache > 2) damaged("unknown symbol table cache type ", cache);
      if (current == 0 && s == unread) continue;
      out->emplace_back(s, object_at(e.u64(8, "symbol table entry"), s));
    }
  }

  // The object at a header address, queued for parsing when new.
  uint32_t object_at(uint64_t addr, std::string_view name) {
    bool added;
    uint32_t id = index.insert(addr, static_cast<uint32_t>(objects->size()), &added);
    if (added) {
      objects->emplace_back();
      todo.push_back({addr, current, name});
    }
    return id;
  }
};

}  // namespace

std::unique_ptr<const File> File::parse(const char* data, size_t size, const std::string& name,
                                        std::string* why, std::string_view unread) {
  auto f = std::make_unique<File>();
  f->data_ = data;
  Walker w;
  w.unread = unread;
  w.objects = &f->objects_;
  f->objects_.reserve(std::min<size_t>(size / 512 + 8, 1 << 14));
  try {
    Span all{reinterpret_cast<const uint8_t*>(data), size};
    if (!all.starts(kSignature, 8)) unsupported("no HDF5 signature at offset 0");
    uint8_t version = all.u8(8, "superblock");
    if (version > 1) unsupported("superblock version ", int(version));
    if (all.u8(13, "superblock") != 8 || all.u8(14, "superblock") != 8)
      unsupported("offsets or lengths not of 8 bytes");
    uint64_t at = version == 0 ? 24 : 28;
    uint64_t base = all.u64(at, "superblock"), eof = all.u64(at + 16, "superblock");
    if (all.u64(at + 24, "superblock") != kUndef) unsupported("a driver information block");
    // libhdf5 takes the superblock's own address (0 here) as the base address, whatever is stored,
    // and moves the stored end of file by the difference (H5F__super_read): so does this reader, so
    // that a file libhdf5 would read is read the same, or refused as damaged before libhdf5 sees it.
    eof -= base;  // wraps when base > eof, as in libhdf5: then too large for any buffer
    if (eof > size)
      throw IOError(concat("Unable to open \"", name, "\" as an HDF5 file: truncated file: eof = ", size,
                           ", stored eof = ", eof));
    w.file = {all.p, eof};
    f->size_ = eof;
    Span root = w.file.sub(at + 32, 40, "root group symbol table entry");
    w.object_at(root.u64(8, "root group symbol table entry"), "");
    // An object outside the subset is skipped and the walk goes on: the file then goes to libhdf5,
    // which trusts what it reads, so every part this reader understands is checked first.
    for (size_t i = 0; i < w.todo.size(); ++i) {
      w.current = static_cast<uint32_t>(i);
      try {
        w.parse_object(w.current, w.todo[i].addr);
      } catch (const Unsupported& u) {
        w.note(u.reason);
      }
    }
    if (f->objects_[0].kind != Object::Kind::group) damaged("the root object is not a group");
    if (!w.outside.empty()) {  // libhdf5 follows global heap references blindly: check them first
      HeapCache heaps;
      std::string err;
      for (size_t i = 0; i < f->objects_.size(); ++i)
        for (const Attr& a : f->objects_[i].attrs)
          if (a.type.cls == 9 && f->read_strings(a, nullptr, &err, &heaps) == StringsRead::damaged) {
            w.current = static_cast<uint32_t>(i);
            damaged("attribute \"", a.name, "\": ", err);
          }
      unsupported(w.outside);
    }
  } catch (const Unsupported& u) {
    *why = u.reason;
    return nullptr;
  } catch (const Damage& d) {
    KCPP_THROW(IOError, "Unable to open \"", name, "\" as an HDF5 file: damaged at \"", w.path(), "\": ", d.reason);
  }
  return f;
}

}  // namespace kerascpp::io::detail::kh5
