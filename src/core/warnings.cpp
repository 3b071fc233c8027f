// The warning sink (kerascpp/warnings.h): a shared_ptr swapped under a mutex, so that warn() can copy
// it and call it with no lock held.
#include "kerascpp/warnings.h"

#include <iostream>
#include <memory>
#include <mutex>
#include <utility>

namespace kerascpp {
namespace {

std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}

std::shared_ptr<const WarningSink>& sink_slot() {
  static std::shared_ptr<const WarningSink> slot;  // empty: the default
  return slot;
}

}  // namespace

void warn(const std::string& message) {
  std::shared_ptr<const WarningSink> sink;
  {
    std::lock_guard<std::mutex> lock(sink_mutex());
    sink = sink_slot();
  }
  if (sink)
    (*sink)(message);
  else
    std::cerr << "UserWarning: " << message << std::endl;
}

WarningSink set_warning_sink(WarningSink sink) {
  auto next = sink ? std::make_shared<const WarningSink>(std::move(sink)) : nullptr;
  std::lock_guard<std::mutex> lock(sink_mutex());
  std::shared_ptr<const WarningSink> previous = std::exchange(sink_slot(), std::move(next));
  return previous ? *previous : WarningSink();
}

}  // namespace kerascpp
