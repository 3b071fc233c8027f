// keras.callbacks.ProgbarLogger (keras/src/callbacks/progbar_logger.py) and the Progbar it drives
// (keras/src/utils/progbar.py), Keras 3.15's text byte for byte. Keras treats the output as a
// dynamic display whenever "posix" is imported, i.e. always on Linux: each update starts with
// backspaces over the previous one and a carriage return, whether or not the output is a terminal.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "training/callbacks/callback_utils.h"

namespace kerascpp::callbacks {
namespace {

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Width on screen: code points ("━" is one column, three bytes).
int64_t columns(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string fmt(const char* f, double v) { return detail::python_format(v, false, f); }

class Progbar {
 public:
  Progbar(std::optional<int64_t> target, int verbose, std::ostream& out)
      : target(target), verbose_(verbose), out_(out), start_(now_s()) {}

  // The ProgbarLogger's metrics are all "stateful" (stateless_metrics=set()): shown as given.
  void update(int64_t current, const Logs* logs, bool finalize) {
    if (logs)
      for (const auto& [k, v] : logs->items()) {
        bool found = false;
        for (auto& kv : values_)
          if (kv.first == k) kv.second = v, found = true;
        if (!found) values_.emplace_back(k, v);
      }
    double now = now_s();
    double per_unit = step_duration(current, now);
    if (verbose_ == 1) {
      // Throttled: at most one redraw per interval, so a batch costs a clock read.
      if (have_update_ && now - last_update_ < kInterval && !finalize) return;
      draw(current, now, per_unit, finalize);
    } else if (verbose_ == 2 && finalize && target && *target > 0) {
      std::string info = counter(current) + " - " + fmt(".0f", now - start_) + "s -" + format_time(per_unit);
      // Keras compares avg > 1e-3 here, not abs(avg) as for verbose 1.
      for (const auto& [k, v] : values_) info += " - " + k + ": " + fmt(v > 1e-3 ? ".4f" : ".4e", v);
      out_ << info << "\n" << std::flush;
    }
    last_update_ = now;
    have_update_ = true;
  }

  std::optional<int64_t> target;

 private:
  static constexpr double kInterval = 0.05;
  static constexpr int kWidth = 20;

  std::string counter(int64_t current) const {
    int digits = static_cast<int>(std::log10(static_cast<double>(*target))) + 1;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%*lld/%lld", digits, static_cast<long long>(current),
                  static_cast<long long>(*target));
    return buf;
  }

  void draw(int64_t current, double now, double per_unit, bool finalize) {
    std::string message(static_cast<size_t>(prev_width_), '\b');
    message += "\r";
    std::string bar;
    int64_t special = 0;
    if (target && *target > 0) {
      bar = "\x1b[1m" + counter(current) + "\x1b[0m ";
      special += 8;
      int prog = static_cast<int>(kWidth * (static_cast<double>(current) / static_cast<double>(*target)));
      std::string line;
      if (prog > 0) {
        for (int i = 0; i < prog; ++i) line += "━";
        bar += "\x1b[32m" + line + "\x1b[0m";
        special += 9;
      }
      line.clear();
      for (int i = 0; i < kWidth - prog; ++i) line += "━";
      bar += "\x1b[37m" + line + "\x1b[0m";
      special += 9;
    } else {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%7lld/Unknown", static_cast<long long>(current));
      bar = buf;
    }
    std::string info;
    if (target && *target > 0 && !finalize) {
      double eta = per_unit * static_cast<double>(*target - current);
      char buf[64];
      if (eta > 3600)
        std::snprintf(buf, sizeof buf, "%d:%02d:%02d", static_cast<int>(eta / 3600),
                      static_cast<int>(std::fmod(eta, 3600) / 60), static_cast<int>(std::fmod(eta, 60)));
      else if (eta > 60)
        std::snprintf(buf, sizeof buf, "%d:%02d", static_cast<int>(eta / 60), static_cast<int>(std::fmod(eta, 60)));
      else
        std::snprintf(buf, sizeof buf, "%ds", static_cast<int>(eta));
      info = std::string(" \x1b[1m") + buf + "\x1b[0m";
    } else {
      info = " \x1b[1m" + fmt(".0f", now - start_) + "s\x1b[0m";
    }
    special += 8;
    info += format_time(per_unit);
    for (const auto& [k, v] : values_) info += " - " + k + ": " + fmt(std::fabs(v) > 1e-3 ? ".4f" : ".4e", v);
    message += bar + info;
    int64_t total = columns(bar) + columns(info) - special;
    if (prev_width_ > total) message += std::string(static_cast<size_t>(prev_width_ - total), ' ');
    if (finalize) message += "\n";
    out_ << message << std::flush;
    prev_width_ = total;
  }

  // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  static std::string format_time(double t) {
    std::string s(" ");
    if (t >= 1 || t == 0) return s.append(fmt(".0f", t)).append("s/step");
    if (t >= 1e-3) return s.append(fmt(".0f", t * 1000.0)).append("ms/step");
    return s.append(fmt(".0f", t * 1000000.0)).append("us/step");
  }

  // The first step (tracing, warm-up) is left out of the estimate once there are more.
  double step_duration(int64_t current, double now) {
    if (!current) return 0;
    double t = after_first_ && current > 1 ? (now - *after_first_) / static_cast<double>(current - 1)
                                           : (now - start_) / static_cast<double>(current);
    if (current == 1) after_first_ = now;
    return t;
  }

  int verbose_;
  std::ostream& out_;
  double start_, last_update_ = 0;
  bool have_update_ = false;
  std::optional<double> after_first_;
  int64_t prev_width_ = 0;
  std::vector<std::pair<std::string, double>> values_;
};

}  // namespace

struct ProgbarLogger::State {
  std::ostream* out;
  int verbose = 1, epochs = 1;
  std::optional<int64_t> target;  // steps per epoch; none: unknown until the first epoch ends
  bool called_in_fit = false;
  int64_t seen = 0;
  std::unique_ptr<Progbar> bar;

  // Keras's set_params; read from params() since Callback::set_params is not virtual.
  void read_params(const Params& p) {
    verbose = p.verbose;
    epochs = p.epochs;
    target = p.steps > 0 ? std::optional<int64_t>(p.steps) : std::nullopt;
  }
  void reset() {
    seen = 0;
    bar.reset();
  }
  void maybe_init() {
    if (!bar) bar = std::make_unique<Progbar>(target, verbose, *out);
  }
  void update(int64_t batch, const Logs& logs) {
    maybe_init();
    seen = batch + 1;
    if (verbose == 1) bar->update(seen, &logs, false);
  }
  void finalize(const Logs& logs) {
    maybe_init();
    if (!target) {
      target = seen;
      bar->target = target;
    }
    bar->update(*target, &logs, true);
  }
};

ProgbarLogger::ProgbarLogger(std::ostream* out) : state_(std::make_shared<State>()) {
  state_->out = out ? out : &std::cout;
}

// Inside fit, validation draws nothing: the epoch's bar shows the val_ values at its end.
void ProgbarLogger::on_train_begin(Logs&) {
  state_->called_in_fit = true;
  state_->read_params(params());
}

void ProgbarLogger::on_epoch_begin(int epoch, Logs&) {
  State& s = *state_;
  if (!s.called_in_fit && !s.bar) s.read_params(params());
  s.reset();
  s.maybe_init();
  if (s.verbose && s.epochs > 1) *s.out << "Epoch " << epoch + 1 << "/" << s.epochs << "\n" << std::flush;
}

void ProgbarLogger::on_train_batch_end(int64_t batch, Logs& logs) { state_->update(batch, logs); }

void ProgbarLogger::on_epoch_end(int, Logs& logs) { state_->finalize(logs); }

void ProgbarLogger::on_test_begin(Logs&) {
  if (state_->called_in_fit) return;
  state_->read_params(params());
  state_->reset();
  state_->maybe_init();
}

void ProgbarLogger::on_test_batch_end(int64_t batch, Logs& logs) {
  if (!state_->called_in_fit) state_->update(batch, logs);
}

void ProgbarLogger::on_test_end(Logs& logs) {
  if (!state_->called_in_fit) state_->finalize(logs);
}

}  // namespace kerascpp::callbacks
