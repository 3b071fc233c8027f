// keras.callbacks.CSVLogger, as keras/src/callbacks/csv_logger.py: Python's csv.DictWriter with the
// excel dialect ("\r\n" line ends, minimal quoting) and Python's str() of each number.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "kerascpp/error.h"
#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {

struct CSVLogger::File {
  std::FILE* f = nullptr;
  bool header = true;      // Keras's append_header
  bool have_keys = false;  // Keras's `self.keys is not None`
  bool have_writer = false;
  ~File() { close(); }
  void close() {
    if (f) std::fclose(f);
    f = nullptr;
  }
};

namespace {
// csv.QUOTE_MINIMAL: quote a field holding the separator, the quote char or a line break.
std::string csv_field(const std::string& s, const std::string& sep) {
  if (s.find(sep) == std::string::npos && s.find_first_of("\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// str() of a numpy float32, as Keras writes each value of an array log: the shortest digits that read
// back as the same float32; positional for 0 and 1e-4 <= |x| < 1e6 (as Python lays out a float),
// else scientific with a signed exponent of two digits or more ("1.4e+06", "5e-05").
std::string float32_str(double value) {
  const float f = static_cast<float>(value);
  const double a = std::fabs(static_cast<double>(f));
  char buf[64];
  if (std::isfinite(f) && a != 0 && (a < 1e-4 || a >= 1e6)) {
    auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
    return std::string(buf, r.ptr);
  }
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  return detail::python_float_repr(std::strtod(std::string(buf, r.ptr).c_str(), nullptr));
}

// A number as Python's repr; an array as Keras's handle_value writes one: "[0.5, 0.25]", quotes included.
std::string value_text(const Logs& logs, const std::string& key) {
  if (const std::vector<double>* a = logs.array(key)) {
    std::string s = "\"[";
    for (size_t i = 0; i < a->size(); ++i) s += (i ? ", " : "") + float32_str((*a)[i]);
    return s + "]\"";
  }
  std::optional<double> v = logs.get(key);
  return v ? detail::python_float_repr(*v) : "NA";
}
}  // namespace

CSVLogger::CSVLogger(std::string filename, std::string separator, bool append)
    : filename_(std::move(filename)), separator_(std::move(separator)), append_(append),
      file_(std::make_unique<File>()) {
  KCPP_CHECK(separator_.size() == 1, ValueError, "CSVLogger: the separator must be a 1-character string. Received: ",
             "separator=\"", separator_, "\"");
}

CSVLogger::~CSVLogger() = default;

void CSVLogger::on_train_begin(Logs&) {
  const char* mode = "w";
  if (append_) {
    std::ifstream in(filename_, std::ios::binary);
    if (in) {
      // Keras: append_header = not bool(len(f.readline())): a header unless the file has a line.
      file_->header = in.peek() == std::ifstream::traits_type::eof();
    }
    mode = "a";
  }
  file_->close();
  file_->f = std::fopen(filename_.c_str(), mode);
  KCPP_CHECK(file_->f != nullptr, IOError, "CSVLogger: unable to open \"", filename_, "\" for writing.");
  file_->have_keys = false;
  file_->have_writer = false;
}

void CSVLogger::on_epoch_end(int epoch, Logs& logs) {
  KCPP_CHECK(file_->f != nullptr, ValueError, "CSVLogger: on_epoch_end before on_train_begin (\"", filename_, "\").");
  if (!file_->have_keys) {
    keys_.clear();
    for (const auto& kv : logs.items()) keys_.push_back(kv.first);
    std::sort(keys_.begin(), keys_.end());  // UTF-8 byte order is Python's code-point order
    bool val_found = false;
    for (const auto& k : keys_) val_found = val_found || k.rfind("val_", 0) == 0;
    // Without validation keys Keras still writes val_ columns (left "NA"), so that a later fit
    // with validation appends rows under the same header.
    if (!val_found && !keys_.empty()) {
      size_t n = keys_.size();
      for (size_t i = 0; i < n; ++i) keys_.push_back("val_" + keys_[i]);
    }
    file_->have_keys = true;
  }
  std::string text;
  if (!file_->have_writer) {
    file_->have_writer = true;
    if (file_->header) {
      text += csv_field("epoch", separator_);
      for (const auto& k : keys_) text += separator_ + csv_field(k, separator_);
      text += "\r\n";
    }
  }
  text += std::to_string(epoch);
  for (const auto& k : keys_) {
    text += separator_ + csv_field(value_text(logs, k), separator_);
  }
  text += "\r\n";
  // One write and a flush per epoch, as Keras flushes after each row.
  bool ok = std::fwrite(text.data(), 1, text.size(), file_->f) == text.size() && std::fflush(file_->f) == 0;
  KCPP_CHECK(ok, IOError, "CSVLogger: unable to write to \"", filename_, "\".");
}

void CSVLogger::on_train_end(Logs&) {
  file_->close();
  file_->have_writer = false;
}

}  // namespace kerascpp::callbacks
