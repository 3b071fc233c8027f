#include "io/npy.h"

#include <cstring>
#include <fstream>
#include <regex>

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

Tensor read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  KCPP_CHECK(f.good(), IOError, "No file found at ", path);
  char magic[8];
  f.read(magic, 8);
  KCPP_CHECK(f.gcount() == 8 && std::memcmp(magic, "\x93NUMPY", 6) == 0, IOError, "The file ", path, " is not a .npy file");
  uint32_t header_len = 0;
  unsigned char len[4] = {0, 0, 0, 0};
  const int major = magic[6];
  f.read(reinterpret_cast<char*>(len), major == 1 ? 2 : 4);
  header_len = len[0] | (len[1] << 8) | (major == 1 ? 0 : (len[2] << 16) | (static_cast<uint32_t>(len[3]) << 24));
  KCPP_CHECK(f.good() && header_len < (1u << 20), IOError, "Truncated .npy header in ", path);
  std::string header(header_len, '\0');
  f.read(header.data(), header_len);
  KCPP_CHECK(f.gcount() == static_cast<std::streamsize>(header_len), IOError, "Truncated .npy header in ", path);

  std::smatch m;
  KCPP_CHECK(std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'")), IOError, "No descr in the .npy header of ", path);
  const std::string descr = m[1];
  KCPP_CHECK(!std::regex_search(header, std::regex("'fortran_order':\\s*True")), NotImplementedError,
             "Fortran-ordered arrays are not supported: ", path);
  KCPP_CHECK(std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")), IOError, "No shape in the .npy header of ", path);
  Shape shape;
  std::string dims = m[1];
  static const std::regex kDigits("\\d+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), kDigits); it != std::sregex_iterator(); ++it)
    shape.push_back(std::stoll(it->str()));
  const NpyType* type = nullptr;
  for (const auto& t : kTypes)
    if (descr == t.descr || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(t.descr).substr(1))) type = &t;
  KCPP_CHECK(type != nullptr, NotImplementedError, "Unsupported .npy dtype '", descr, "' in ", path);
  Tensor t = Tensor::empty(shape, type->dtype);
  f.read(static_cast<char*>(t.raw_data()), static_cast<std::streamsize>(t.nbytes()));
  KCPP_CHECK(f.gcount() == static_cast<std::streamsize>(t.nbytes()), IOError, "Truncated data in ", path, ": expected ",
             t.nbytes(), " bytes for shape ", shape_str(shape));
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
