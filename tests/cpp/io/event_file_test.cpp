// TensorBoard event files: CRC-32C against its published check value, the record framing read back,
// and the histogram rows tf.summary.histogram computes. tests/python/test_tensorboard.py reads whole
// files with the tensorboard package and compares them with Keras's.
#include "io/event_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace kerascpp::io {
namespace {

std::vector<std::string> records_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  size_t at = 0;
  while (at < bytes.size()) {
    uint64_t n;
    uint32_t len_crc, data_crc;
    EXPECT_GE(bytes.size(), at + 12);
    std::memcpy(&n, bytes.data() + at, 8);
    std::memcpy(&len_crc, bytes.data() + at + 8, 4);
    EXPECT_EQ(len_crc, masked_crc32c(bytes.data() + at, 8));
    EXPECT_GE(bytes.size(), at + 16 + n);
    std::memcpy(&data_crc, bytes.data() + at + 12 + n, 4);
    EXPECT_EQ(data_crc, masked_crc32c(bytes.data() + at + 12, n));
    out.push_back(bytes.substr(at + 12, n));
    at += 16 + n;
  }
  return out;
}

TEST(EventFile, Crc32cCheckValue) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);  // the CRC-32C catalogue's check value
  EXPECT_EQ(crc32c("", 0), 0u);
}

TEST(EventFile, RecordsAreFramedAndFirstIsTheVersion) {
  const auto dir = std::filesystem::temp_directory_path() / ("kcpp_events_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::remove_all(dir);
  std::string path;
  {
    EventFileWriter w((dir / "train").string());
    path = w.path();
    w.scalar("epoch_loss", 0.25, 3);
    w.histogram("dense/kernel/histogram", Tensor::from_vector({4}, {0.f, 1.f, 2.f, 3.f}), 3);
    w.flush();
  }
  EXPECT_NE(std::filesystem::path(path).filename().string().find("events.out.tfevents."), std::string::npos);
  const auto records = records_of(path);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_NE(records[0].find("brain.Event:2"), std::string::npos);
  EXPECT_NE(records[1].find("epoch_loss"), std::string::npos);
  EXPECT_NE(records[1].find("scalars"), std::string::npos);
  float quarter = 0.25f;
  EXPECT_NE(records[1].find(std::string(reinterpret_cast<const char*>(&quarter), 4)), std::string::npos);
  EXPECT_NE(records[2].find("histograms"), std::string::npos);
  std::filesystem::remove_all(dir);
  EXPECT_THROW(EventFileWriter("/proc/no/such/dir"), IOError);
}

}  // namespace
}  // namespace kerascpp::io
