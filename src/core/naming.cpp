#include "core/naming.h"

#include <map>
#include <mutex>

namespace kerascpp {
namespace {
std::mutex mutex;
std::map<std::string, int, std::less<>>& counters() {
  static std::map<std::string, int, std::less<>> c;
  return c;
}
}  // namespace

std::string unique_name(std::string_view prefix) {
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = counters().try_emplace(std::string(prefix), 0);
  if (inserted) return std::string(prefix);
  return std::string(prefix) + "_" + std::to_string(++it->second);
}

void reset_automatic_names() {
  std::lock_guard<std::mutex> lock(mutex);
  counters().clear();
}

}  // namespace kerascpp
