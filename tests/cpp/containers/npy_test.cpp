// The .npy reader (io/npy/npy.h) on the headers numpy writes, and on damaged ones: a clear error naming
// the file, with the shape checked against the bytes present before anything is allocated.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "../test_errors.h"
#include "../test_paths.h"
#include "io/npy/npy.h"

namespace kerascpp {
namespace {

// A .npy file: magic, version, header length (2 bytes in version 1, 4 in 2 and 3), header, data.
std::string npy(const std::string& header, const std::string& data, int version = 1) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const uint32_t n = static_cast<uint32_t>(header.size());
  for (int i = 0; i < (version == 1 ? 2 : 4); ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

Tensor read(const std::string& bytes) { return io::read_npy_bytes(bytes.data(), bytes.size(), "x.npy"); }

TEST(Npy, HeadersNumpyWrites) {
  const float v[3] = {1.5f, -2.f, 3.f};
  const std::string data(reinterpret_cast<const char*>(v), sizeof v);
  for (int version : {1, 2, 3}) {
    Tensor t = read(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", data, version));
    EXPECT_EQ(t.shape(), (Shape{3}));
    EXPECT_EQ(t.data<float>()[1], -2.f);
  }
  Tensor scalar = read(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", data.substr(0, 4)));
  EXPECT_EQ(scalar.shape(), Shape{});
  EXPECT_EQ(scalar.data<float>()[0], 1.5f);
  Tensor b = read(npy("{'descr': '|b1', 'fortran_order': False, 'shape': (1, 2), }", std::string("\1\0", 2)));
  EXPECT_EQ(b.dtype(), DType::bool_);
  EXPECT_EQ(b.shape(), (Shape{1, 2}));
  Tensor empty = read(npy("{'descr': '<i8', 'fortran_order': False, 'shape': (0, 4), }", ""));
  EXPECT_EQ(empty.shape(), (Shape{0, 4}));
}

TEST(Npy, RoundTripThroughAFile) {
  Tensor t = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  const std::string path = testing::temp_path("npy_round_trip.npy");
  io::write_npy(path, t);
  Tensor back = io::read_npy(path);
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(std::memcmp(back.raw_data(), t.raw_data(), t.nbytes()), 0);
}

TEST(Npy, DamagedFilesNameTheFileAndThePlace) {
  using testing::error_of;
  auto expect = [](const std::string& bytes, const char* part) {
    const std::string msg = error_of([&] { read(bytes); });
    EXPECT_NE(msg.find("x.npy"), std::string::npos) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
  };
  expect("hello", "not a .npy file");
  expect(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", std::string(8, '\0')),
         "needs 16 bytes, the file holds 8");
  // 2^40 floats declared in a 100-byte file: refused before the 4 TiB are asked for.
  expect(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", ""), "needs 4398046511104 bytes");
  expect(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""),
         "more bytes than can be counted");
  expect(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", ""), "too large");
  expect(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", std::string(8, '\0')), "Fortran");
  expect(npy("{'descr': '>c16', 'fortran_order': False, 'shape': (2,), }", ""), "Unsupported .npy dtype '>c16'");
  expect(npy("{'descr': '<f4', 'fortran_order': False, }", ""), "No shape");
  std::string past_end = npy("{", "", 2);
  past_end[8] = '\xf0';
  past_end[11] = '\x0f';
  expect(past_end, "Truncated .npy header");
}

}  // namespace
}  // namespace kerascpp
