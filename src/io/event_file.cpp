#include "io/event_file.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "kerascpp/error.h"

namespace kerascpp::io {
namespace {

// Protocol buffers' wire format, for the few messages an event file holds.
void varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void tag(std::string& out, int field, int wire) { varint(out, (static_cast<uint64_t>(field) << 3) | wire); }
void bytes_field(std::string& out, int field, const std::string& bytes) {
  tag(out, field, 2);
  varint(out, bytes.size());
  out += bytes;
}
void varint_field(std::string& out, int field, uint64_t v) {
  tag(out, field, 0);
  varint(out, v);
}
template <typename T>
void fixed(std::string& out, T v) {  // little-endian, as every machine kerascpp builds for
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

std::string event(int64_t step) {
  std::string e;
  tag(e, 1, 1);  // wall_time: double
  fixed(e, std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  if (step != 0) varint_field(e, 2, static_cast<uint64_t>(step));
  return e;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

const std::array<uint32_t, 256>& crc_table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // Castagnoli, reflected
      t[i] = c;
    }
    return t;
  }();
  return table;
}

}  // namespace

uint32_t crc32c(const void* data, size_t n) {
  const auto& t = crc_table();
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = t[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(const void* data, size_t n) {
  const uint32_t c = crc32c(data, n);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

EventFileWriter::EventFileWriter(const std::string& dir) {
  static std::atomic<int> counter{0};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  KCPP_CHECK(!ec, IOError, "TensorBoard: cannot create the log directory \"", dir, "\": ", ec.message());
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::system_clock::now().time_since_epoch()).count();
  path_ = (std::filesystem::path(dir) / ("events.out.tfevents." + std::to_string(seconds) + "." + host_name() + "." +
                                         std::to_string(getpid()) + "." + std::to_string(counter++) + ".v2"))
              .string();
  file_ = std::fopen(path_.c_str(), "wb");
  KCPP_CHECK(file_ != nullptr, IOError, "TensorBoard: cannot write the event file \"", path_, "\": ", std::strerror(errno));
  std::string e = event(0);
  bytes_field(e, 3, "brain.Event:2");  // file_version
  write_record(e);
  flush();
}

EventFileWriter::~EventFileWriter() {
  if (file_) std::fclose(file_);
}

void EventFileWriter::write_record(const std::string& data) {
  std::string r;
  const uint64_t n = data.size();
  fixed(r, n);
  fixed(r, masked_crc32c(r.data(), 8));
  r += data;
  fixed(r, masked_crc32c(data.data(), data.size()));
  KCPP_CHECK(std::fwrite(r.data(), 1, r.size(), file_) == r.size(), IOError, "TensorBoard: cannot write to \"", path_,
             "\": ", std::strerror(errno));
}

void EventFileWriter::flush() {
  KCPP_CHECK(std::fflush(file_) == 0, IOError, "TensorBoard: cannot write to \"", path_, "\": ", std::strerror(errno));
}

// Event{wall_time, step, summary: Summary{value: [Value{tag, metadata{plugin_data{plugin_name}}, tensor}]}}.
void EventFileWriter::write_summary(const std::string& name, const std::string& plugin,
                                    const std::string& plugin_content, int dtype, const std::vector<int64_t>& shape,
                                    const std::string& content, bool is_string, int64_t step) {
  std::string tensor;
  varint_field(tensor, 1, static_cast<uint64_t>(dtype));
  std::string dims;
  for (int64_t d : shape) {
    std::string dim;
    varint_field(dim, 1, static_cast<uint64_t>(d));
    bytes_field(dims, 2, dim);
  }
  bytes_field(tensor, 2, dims);
  bytes_field(tensor, is_string ? 8 : 4, content);  // string_val, else tensor_content
  std::string plugin_data, metadata;
  bytes_field(plugin_data, 1, plugin);
  if (!plugin_content.empty()) bytes_field(plugin_data, 2, plugin_content);
  bytes_field(metadata, 1, plugin_data);
  std::string value;
  bytes_field(value, 1, name);
  bytes_field(value, 9, metadata);
  bytes_field(value, 8, tensor);
  std::string summary;
  bytes_field(summary, 1, value);
  std::string e = event(step);
  bytes_field(e, 5, summary);
  write_record(e);
}

void EventFileWriter::scalar(const std::string& name, double value, int64_t step) {
  std::string content;
  fixed(content, static_cast<float>(value));
  write_summary(name, "scalars", "", /*DT_FLOAT*/ 1, {}, content, false, step);
}

void EventFileWriter::histogram(const std::string& name, const Tensor& values, int64_t step) {
  constexpr int kBuckets = 30;  // tf.summary.histogram's default
  const Tensor v = values.dtype() == DType::float32 ? values : values.astype(DType::float32);
  const float* p = v.data<float>();
  // Over the finite values (a diverged weight's NaN / inf would make every edge NaN).
  double min = INFINITY, max = -INFINITY;
  int64_t n = 0;
  for (int64_t i = 0; i < v.size(); ++i)
    if (std::isfinite(p[i])) min = std::min<double>(min, p[i]), max = std::max<double>(max, p[i]), ++n;
  std::vector<double> rows(3 * kBuckets, 0.0);  // all zero for no values, as TensorBoard's _buckets
  if (n > 0 && max == min) {  // one value: every bucket at it, the count in the last
    for (int b = 0; b < kBuckets; ++b) rows[3 * b] = rows[3 * b + 1] = max;
    rows[3 * kBuckets - 1] = static_cast<double>(n);
  } else if (n > 0) {
    const double width = (max - min) / kBuckets;
    for (int64_t i = 0; i < v.size(); ++i) {
      if (!std::isfinite(p[i])) continue;
      const auto b = static_cast<int64_t>(std::floor((static_cast<double>(p[i]) - min) / width));
      rows[3 * std::min<int64_t>(b, kBuckets - 1) + 2] += 1;
    }
    for (int b = 0; b < kBuckets; ++b) {  // tf.linspace(min, max, 31), its last edge max
      rows[3 * b] = min + width * b;
      rows[3 * b + 1] = b + 1 == kBuckets ? max : min + width * (b + 1);
    }
  }
  std::string content(reinterpret_cast<const char*>(rows.data()), rows.size() * sizeof(double));
  write_summary(name, "histograms", "", /*DT_DOUBLE*/ 2, {kBuckets, 3}, content, false, step);
}

void EventFileWriter::string(const std::string& name, const std::string& value, int64_t step, const std::string& plugin,
                             const std::string& plugin_content) {
  write_summary(name, plugin, plugin_content, /*DT_STRING*/ 7, {}, value, true, step);
}

}  // namespace kerascpp::io
