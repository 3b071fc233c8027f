#include "kernels/dispatch_log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

namespace kerascpp::kernels {
namespace {

bool read_verbose() {
  const char* v = std::getenv("KERASCPP_VERBOSE");
  if (v == nullptr) return false;
  std::string_view list(v);
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (item == "dispatch" || item == "all") return true;
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return false;
}

std::atomic<int> verbose{-1};  // -1: not read yet

std::string line_of(std::string_view family, std::string_view problem, std::string_view chosen,
                    std::string_view why) {
  std::string line = "kerascpp_verbose,dispatch,";
  line.append(family).append(",").append(problem).append(",").append(chosen);
  if (!why.empty()) line.append(",why: ").append(why);
  line += '\n';
  return line;
}

}  // namespace

bool dispatch_verbose() {
  int v = verbose.load(std::memory_order_relaxed);
  if (v < 0) {
    v = read_verbose() ? 1 : 0;
    verbose.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}

void reread_dispatch_verbose() { verbose.store(read_verbose() ? 1 : 0, std::memory_order_relaxed); }

void log_dispatch(std::string_view family, std::string_view problem, std::string_view chosen,
                  std::string_view why) {
  if (!dispatch_verbose()) return;
  const std::string line = line_of(family, problem, chosen, why);
  std::fputs(line.c_str(), stderr);  // one write per line: lines from threads do not interleave
}

void log_dispatch_once(std::string_view family, std::string_view problem, std::string_view chosen,
                       std::string_view why) {
  if (!dispatch_verbose()) return;
  // The lines printed so far: diagnostics only, made and kept only while KERASCPP_VERBOSE asks.
  static std::mutex mutex;
  static std::set<std::string> printed;
  const std::string line = line_of(family, problem, chosen, why);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!printed.insert(line).second) return;
  }
  std::fputs(line.c_str(), stderr);
}

}  // namespace kerascpp::kernels
