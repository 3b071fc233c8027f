// TensorBoard's event files, written as TensorFlow 2's summary writer writes them (what Keras's
// TensorBoard callback produces), without a protobuf library:
//   - the file: "events.out.tfevents.<seconds>.<host>.<pid>.<n>.v2" in its directory;
//   - each record: uint64 length, uint32 masked CRC-32C of the length, the bytes, uint32 masked CRC-32C
//     of the bytes (tensorflow/core/lib/io/record_writer.cc);
//   - each record an Event message (tensorflow/core/util/event.proto): wall_time, step, and either
//     file_version "brain.Event:2" (the first) or a Summary of one value: a tag, the plugin's metadata
//     ("scalars", "histograms", "text", "graph_keras_model") and a TensorProto, as tf.summary.scalar / histogram / text write.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kerascpp/tensor.h"

namespace kerascpp::io {

// CRC-32C (Castagnoli), and TensorFlow's masked form of it.
uint32_t crc32c(const void* data, size_t n);
uint32_t masked_crc32c(const void* data, size_t n);

class EventFileWriter {
 public:
  // Creates `dir` (and its parents) and a new event file in it; IOError naming the path on failure.
  explicit EventFileWriter(const std::string& dir);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // tf.summary.scalar: a float32 tensor of rank 0, plugin "scalars".
  void scalar(const std::string& tag, double value, int64_t step);
  // tf.summary.histogram (buckets=30): a float64 (k, 3) tensor of [left edge, right edge, count] rows over
  // [min, max] of the values (one bucket of the value when all are equal), plugin "histograms".
  void histogram(const std::string& tag, const Tensor& values, int64_t step);
  // A string tensor of rank 0 for `plugin`: "text" (tf.summary.text), or "graph_keras_model" with content
  // "1" (the model's JSON config, Keras's keras_model_summary).
  void string(const std::string& tag, const std::string& value, int64_t step, const std::string& plugin,
              const std::string& plugin_content = "");
  void flush();
  const std::string& path() const { return path_; }

 private:
  void write_summary(const std::string& tag, const std::string& plugin, const std::string& plugin_content, int dtype,
                     const std::vector<int64_t>& shape, const std::string& content, bool is_string, int64_t step);
  void write_record(const std::string& event);

  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace kerascpp::io
