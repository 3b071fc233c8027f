#include "io/npy/npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

namespace kerascpp::io {
namespace {

struct NpyType {
  const char* descr;
  DType dtype;
};
constexpr NpyType kTypes[] = {{"<f4", DType::float32}, {"<f8", DType::float64}, {"<f2", DType::float16},
                              {"<i4", DType::int32},   {"<i8", DType::int64},   {"|i1", DType::int8},
                              {"|u1", DType::uint8},   {"|b1", DType::bool_}};

}  // namespace

namespace {

// The value text after 'key': in a .npy header dict ("" when the key is missing).
std::string_view header_value(std::string_view header, std::string_view key) {
  std::string quoted(1, '\'');
  quoted.append(key).push_back('\'');
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) return {};
  at = header.find(':', at + quoted.size());
  if (at == std::string_view::npos) return {};
  header.remove_prefix(at + 1);
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  return header;
}

}  // namespace

Tensor read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  KCPP_CHECK(f.good(), IOError, "No file found at ", path);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return read_npy_bytes(bytes.data(), bytes.size(), path);
}

Tensor read_npy_bytes(const void* data, size_t size, const std::string& name) {
  const auto* b = static_cast<const unsigned char*>(data);
  KCPP_CHECK(size >= 10 && std::memcmp(b, "\x93NUMPY", 6) == 0, IOError, "The file ", name, " is not a .npy file");
  const int major = b[6];
  KCPP_CHECK(major >= 1 && major <= 3, IOError, "Unsupported .npy format version ", major, " in ", name);
  const size_t prefix = major == 1 ? 10 : 12;
  KCPP_CHECK(size >= prefix, IOError, "Truncated .npy header in ", name);
  const uint64_t header_len = major == 1 ? b[8] | (b[9] << 8)
                                         : b[8] | (b[9] << 8) | (b[10] << 16) | (static_cast<uint64_t>(b[11]) << 24);
  KCPP_CHECK(header_len <= size - prefix, IOError, "Truncated .npy header in ", name, ": ", header_len,
             " bytes declared, ", size - prefix, " present");
  const std::string_view header(reinterpret_cast<const char*>(b + prefix), header_len);

  std::string_view descr = header_value(header, "descr");
  KCPP_CHECK(descr.size() > 2 && descr[0] == '\'' && descr.find('\'', 1) != std::string_view::npos, IOError,
             "No descr in the .npy header of ", name);
  descr = descr.substr(1, descr.find('\'', 1) - 1);
  KCPP_CHECK(header_value(header, "fortran_order").substr(0, 4) != "True", NotImplementedError,
             "Fortran-ordered arrays are not supported: ", name);
  std::string_view dims = header_value(header, "shape");
  KCPP_CHECK(!dims.empty() && dims[0] == '(' && dims.find(')') != std::string_view::npos, IOError,
             "No shape in the .npy header of ", name);
  dims = dims.substr(1, dims.find(')') - 1);
  Shape shape;
  for (size_t i = 0; i < dims.size();) {
    if (dims[i] < '0' || dims[i] > '9') {
      KCPP_CHECK(dims[i] == ',' || dims[i] == ' ', IOError, "Invalid shape (", dims, ") in the .npy header of ", name);
      ++i;
      continue;
    }
    int64_t d = 0;
    for (; i < dims.size() && dims[i] >= '0' && dims[i] <= '9'; ++i)
      KCPP_CHECK(!__builtin_mul_overflow(d, 10, &d) && !__builtin_add_overflow(d, dims[i] - '0', &d), IOError,
                 "A dimension of the shape (", dims, ") in the .npy header of ", name, " is too large");
    shape.push_back(d);
  }
  const NpyType* type = nullptr;
  for (const auto& t : kTypes)
    if (descr == t.descr || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string_view(t.descr).substr(1)))
      type = &t;
  KCPP_CHECK(type != nullptr, NotImplementedError, "Unsupported .npy dtype '", descr, "' in ", name);
  // Checked against the bytes present before anything is allocated (overflow-safe).
  const size_t present = size - prefix - header_len;
  uint64_t nbytes = dtype_size(type->dtype);
  bool overflow = false;
  for (int64_t d : shape) overflow = overflow || __builtin_mul_overflow(nbytes, static_cast<uint64_t>(d), &nbytes);
  KCPP_CHECK(!overflow && nbytes <= present, IOError, "Truncated data in ", name, ": shape ",
             shape_str(shape), " needs ", overflow ? std::string("more bytes than can be counted") : std::to_string(nbytes) + " bytes",
             ", the file holds ", present);
  Tensor t = Tensor::empty(shape, type->dtype);
  std::memcpy(t.raw_data(), b + prefix + header_len, t.nbytes());
  return t;
}

void write_npy(const std::string& path, const Tensor& t) {
  const char* descr = nullptr;
  for (const auto& k : kTypes)
    if (k.dtype == t.dtype()) descr = k.descr;
  KCPP_CHECK(descr != nullptr, NotImplementedError, "Cannot write dtype ", t.dtype(), " to .npy");
  std::string shape = "(";
  for (int64_t d : t.shape()) shape += std::to_string(d) + ", ";
  if (t.rank() > 1) shape.resize(shape.size() - 1);
  if (t.rank() > 1) shape.pop_back();
  if (t.rank() == 1) shape.pop_back();  // "(n,)"
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  KCPP_CHECK(f.good(), IOError, "Unable to write ", path);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  f.put(static_cast<char>(len & 0xff));
  f.put(static_cast<char>(len >> 8));
  f << header;
  f.write(static_cast<const char*>(t.raw_data()), static_cast<std::streamsize>(t.nbytes()));
  KCPP_CHECK(f.good(), IOError, "Unable to write ", path);
}

}  // namespace kerascpp::io
