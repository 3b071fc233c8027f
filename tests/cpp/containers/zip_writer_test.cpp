// ZipWriter: archives it writes read back through ZipArchive (Python's zipfile was checked by hand).
#include "io/zip/zip_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "containers_test_util.h"
#include "io/zip/zip_archive.h"

namespace kerascpp::io {
namespace {

using testing::error_of;

std::string text(const ZipMember& m) { return std::string(m.data, m.size); }

ZipArchive reopen(const std::vector<char>& bytes) {
  auto keep = std::make_shared<std::vector<char>>(bytes);
  return ZipArchive::from_memory(keep->data(), keep->size(), "written.zip", keep);
}

std::vector<char> write_sample(ZipWriter& z) {
  std::vector<char> big(100000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  z.add("metadata.json", R"({"keras_version": "3.15.1"})");
  z.add("config.json", "{}");
  z.add("assets/empty.txt", "");
  z.add("caf\xc3\xa9.bin", big.data(), big.size());
  return big;
}

void check_sample(const ZipArchive& a, const std::vector<char>& big) {
  EXPECT_EQ(a.names(), (std::vector<std::string>{"metadata.json", "config.json", "assets/empty.txt",
                                                 "caf\xc3\xa9.bin"}));
  EXPECT_EQ(text(a.member("metadata.json", true)), R"({"keras_version": "3.15.1"})");
  EXPECT_EQ(text(a.member("config.json", true)), "{}");
  EXPECT_EQ(a.member("assets/empty.txt", true).size, 0u);
  ZipMember b = a.member("caf\xc3\xa9.bin", true);
  ASSERT_EQ(b.size, big.size());
  EXPECT_EQ(std::memcmp(b.data, big.data(), big.size()), 0);
  for (const ZipEntry& e : a.entries()) EXPECT_EQ(e.method, 0);
  EXPECT_EQ(a.entry("caf\xc3\xa9.bin").flags & (1 << 11), 1 << 11);  // UTF-8 name flag
  EXPECT_EQ(a.entry("config.json").flags, 0);
}

TEST(ZipWriter, RoundTrip) {
  ZipWriter z;
  std::vector<char> big = write_sample(z);
  std::vector<char> bytes = z.finish();
  check_sample(reopen(bytes), big);
  // The first member's data sits right after its 30-byte header and name, as Keras's do.
  EXPECT_EQ(std::string(bytes.data() + 30 + 13, 3), "{\"k");
}

TEST(ZipWriter, ForcedZip64) {
  ZipWriter z(ZipWriter::Options{.force_zip64 = true});
  std::vector<char> big = write_sample(z);
  std::vector<char> bytes = z.finish();
  ZipArchive a = reopen(bytes);
  check_sample(a, big);
  EXPECT_GT(a.entry("config.json").local_header_offset, 0u);
  // The end record holds only sentinels: the reader must have used the ZIP64 records.
  size_t end = bytes.size() - 22;
  EXPECT_EQ(std::memcmp(bytes.data() + end, "PK\5\6", 4), 0);
  EXPECT_EQ(std::memcmp(bytes.data() + end + 16, "\xff\xff\xff\xff", 4), 0);
}

TEST(ZipWriter, DosTimestamp) {
  std::tm tm{};
  tm.tm_year = 2024 - 1900;
  tm.tm_mon = 2;  // March
  tm.tm_mday = 5;
  tm.tm_hour = 13;
  tm.tm_min = 45;
  tm.tm_sec = 31;
  tm.tm_isdst = -1;
  ZipWriter z(ZipWriter::Options{.mtime = std::mktime(&tm)});
  z.add("a", "x");
  std::vector<char> b = z.finish();
  auto u16 = [&](size_t at) { return static_cast<uint16_t>(uint8_t(b[at]) | uint8_t(b[at + 1]) << 8); };
  EXPECT_EQ(u16(10), 13 << 11 | 45 << 5 | 31 / 2);  // local header: time
  EXPECT_EQ(u16(12), (2024 - 1980) << 9 | 3 << 5 | 5);
}

TEST(ZipWriter, WritesToAFileDescriptor) {
  std::string path = testing::temp_path("written.keras");
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ZipWriter z = ZipWriter::to_fd(fd, path);
  std::vector<char> big = write_sample(z);
  EXPECT_TRUE(z.finish().empty());
  ::close(fd);
  check_sample(ZipArchive::open(path), big);
  ZipWriter bad = ZipWriter::to_fd(-1, "closed.keras");
  std::string msg = error_of<IOError>([&] { bad.add("a", "x"); });
  EXPECT_NE(msg.find("closed.keras"), std::string::npos) << msg;
}

TEST(ZipWriter, RefusesMisuse) {
  ZipWriter z;
  z.add("a", "1");
  std::string msg = error_of<ValueError>([&] { z.add("a", "2"); });
  EXPECT_NE(msg.find("Duplicate member \"a\""), std::string::npos) << msg;
  error_of<ValueError>([&] { z.add("", "2"); });
  z.finish();
  error_of<ValueError>([&] { z.add("b", "3"); });
  error_of<ValueError>([&] { z.finish(); });
}

}  // namespace
}  // namespace kerascpp::io
