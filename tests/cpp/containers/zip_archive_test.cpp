// ZipArchive on archives written by Python's zipfile and by Keras, and on damaged ones.
#include "io/zip/zip_archive.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "containers_test_util.h"
#include "io/hdf5/hdf5_file.h"

namespace kerascpp::io {
namespace {

using testing::error_of;
using testing::fixture;
using testing::read_bytes;
using testing::temp_path;
using testing::write_bytes;

std::string text(const ZipMember& m) { return std::string(m.data, m.size); }

std::vector<char> python_deflated() {  // bytes(range(256)) * 40
  std::vector<char> v;
  for (int r = 0; r < 40; ++r)
    for (int i = 0; i < 256; ++i) v.push_back(static_cast<char>(i));
  return v;
}

TEST(ZipArchive, ReadsPythonZipfileOutput) {
  ZipArchive z = ZipArchive::open(fixture("python.zip"));
  EXPECT_EQ(z.names(), (std::vector<std::string>{"stored.txt", "dir/deflated.bin"}));
  EXPECT_TRUE(z.has("stored.txt"));
  EXPECT_FALSE(z.has("stored"));
  EXPECT_EQ(z.entry("stored.txt").method, 0);
  EXPECT_EQ(z.entry("dir/deflated.bin").method, 8);
  std::string want;
  for (int i = 0; i < 3; ++i) want += "stored bytes\n";
  EXPECT_EQ(text(z.member("stored.txt", /*verify_crc=*/true)), want);
  ZipMember d = z.member("dir/deflated.bin", /*verify_crc=*/true);
  std::vector<char> expected = python_deflated();
  ASSERT_EQ(d.size, expected.size());
  EXPECT_EQ(std::memcmp(d.data, expected.data(), d.size), 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d.data) % 64, 0u);  // inflated into aligned storage
}

TEST(ZipArchive, StoredMembersAreReadInPlace) {
  auto bytes = std::make_shared<std::vector<char>>(read_bytes(fixture("python.zip")));
  ZipMember m;
  {
    ZipArchive z = ZipArchive::from_memory(bytes->data(), bytes->size(), "mem.zip", bytes);
    m = z.member("stored.txt");
  }
  const char* begin = bytes->data();
  EXPECT_GE(m.data, begin);
  EXPECT_LE(m.data + m.size, begin + bytes->size());
  EXPECT_EQ(m.keepalive.get(), bytes.get());
}

TEST(ZipArchive, KerasArchiveWeightsOpenInPlace) {
  ZipMember w;
  {
    ZipArchive z = ZipArchive::open(fixture("keras3_mlp.keras"));
    EXPECT_EQ(z.names(), (std::vector<std::string>{"metadata.json", "config.json", "model.weights.h5"}));
    for (const ZipEntry& e : z.entries()) EXPECT_EQ(e.method, 0) << e.name;
    EXPECT_EQ(text(z.member("metadata.json")).rfind("{\"keras_version\": \"3.", 0), 0u);
    w = z.member("model.weights.h5", /*verify_crc=*/true);
  }  // the mapping lives on in the member's keepalive
  H5File h5 = H5File::open_image(w.data, w.size, "keras3_mlp.keras/model.weights.h5", w.keepalive);
  Tensor kernel = h5.root().dataset("layers/dense/vars/0").read();
  Tensor legacy = H5File::open(fixture("keras3_mlp.h5")).root().dataset(
      "model_weights/dense/sequential/dense/kernel").read();
  ASSERT_EQ(kernel.shape(), legacy.shape());
  EXPECT_EQ(std::memcmp(kernel.raw_data(), legacy.raw_data(), kernel.nbytes()), 0);
}

TEST(ZipArchive, ForeignAndMissingFiles) {
  std::string msg = error_of<IOError>([] { ZipArchive::open(temp_path("no_such.keras")); });
  EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;
  msg = error_of<IOError>([] { ZipArchive::open(std::string(KCPP_SOURCE_DIR) + "/tests"); });
  EXPECT_NE(msg.find("directory"), std::string::npos) << msg;
  write_bytes(temp_path("empty.zip"), {});
  msg = error_of<IOError>([] { ZipArchive::open(temp_path("empty.zip")); });
  EXPECT_NE(msg.find("empty"), std::string::npos) << msg;
  msg = error_of<IOError>([] { ZipArchive::open(fixture("keras3_mlp.h5")); });
  EXPECT_NE(msg.find("no end of central directory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("keras3_mlp.h5"), std::string::npos) << msg;
  msg = error_of<IOError>([] { ZipArchive::from_memory("PK", 2, "tiny.zip"); });
  EXPECT_NE(msg.find("too short"), std::string::npos) << msg;
  ZipArchive z = ZipArchive::open(fixture("python.zip"));
  msg = error_of<IOError>([&] { z.member("config.json"); });
  EXPECT_NE(msg.find("\"config.json\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("[stored.txt, dir/deflated.bin]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("python.zip"), std::string::npos) << msg;
}

// Offset of the first central directory entry, read from the end record.
size_t central_entry(const std::vector<char>& z) {
  size_t end = std::string_view(z.data(), z.size()).rfind("PK\5\6");
  uint32_t offset;
  std::memcpy(&offset, z.data() + end + 16, 4);
  return offset;
}

TEST(ZipArchive, DamagedArchives) {
  std::vector<char> good = read_bytes(fixture("python.zip"));
  auto open = [](const std::vector<char>& b) { return ZipArchive::from_memory(b.data(), b.size(), "bad.zip"); };
  // CRC: a flipped data byte passes unchecked and fails checked.
  std::vector<char> flipped = good;
  flipped[30 + std::strlen("stored.txt")] ^= 1;  // first byte of the first member's data
  EXPECT_EQ(open(flipped).member("stored.txt").data[0], 's' ^ 1);
  std::string msg = error_of<IOError>([&] { open(flipped).member("stored.txt", true); });
  EXPECT_NE(msg.find("CRC-32 mismatch"), std::string::npos) << msg;
  // Unsupported compression method and encryption, patched into the central directory.
  size_t c = central_entry(good);
  ASSERT_GT(c, 0u);
  std::vector<char> bzip2 = good;
  bzip2[c + 10] = 12;
  msg = error_of<IOError>([&] { open(bzip2).member("stored.txt"); });
  EXPECT_NE(msg.find("unsupported compression method 12 (bzip2)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"stored.txt\""), std::string::npos) << msg;
  std::vector<char> encrypted = good;
  encrypted[c + 8] |= 1;
  EXPECT_NE(error_of<IOError>([&] { open(encrypted).member("stored.txt"); }).find("encrypted"),
            std::string::npos);
  std::vector<char> no_local = good;
  no_local[0] = 'X';
  msg = error_of<IOError>([&] { open(no_local).member("stored.txt"); });
  EXPECT_NE(msg.find("local header"), std::string::npos) << msg;
  std::vector<char> far = good;
  far[c + 42 + 2] = 0x7f;  // local header offset far past the end
  msg = error_of<IOError>([&] { open(far).member("stored.txt"); });
  EXPECT_NE(msg.find("outside the file"), std::string::npos) << msg;
}

TEST(ZipArchive, TruncatedAndScrambledNeverCrash) {
  for (const char* name : {"python.zip", "keras3_mlp.keras"}) {
    std::vector<char> whole = read_bytes(fixture(name));
    std::mt19937 rng(3);
    for (int k = 0; k < 50; ++k) {
      std::vector<char> cut(whole.begin(), whole.begin() + whole.size() * k / 50);
      std::vector<char> scrambled = whole;
      size_t at = whole.size() * k / 50;
      for (size_t i = at; i < std::min(at + 16, whole.size()); ++i) scrambled[i] = static_cast<char>(rng());
      for (const std::vector<char>* v : {&cut, &scrambled}) {
        try {
          ZipArchive z = ZipArchive::from_memory(v->data(), v->size(), "damaged.zip");
          for (const std::string& m : z.names()) {
            try {
              z.member(m, /*verify_crc=*/true);
            } catch (const IOError&) {
            }
          }
        } catch (const IOError& e) {
          EXPECT_NE(std::string(e.what()).find("damaged.zip"), std::string::npos) << e.what();
        }
      }
      EXPECT_THROW(ZipArchive::from_memory(cut.data(), cut.size(), "cut.zip"), IOError);
    }
  }
}

}  // namespace
}  // namespace kerascpp::io
