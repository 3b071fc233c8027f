#include "kernels/dispatch_log.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kerascpp::kernels {

bool dispatch_verbose() {
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

void log_dispatch(std::string_view family, std::string_view problem, std::string_view chosen,
                  std::string_view why) {
  if (!dispatch_verbose()) return;
  std::string line = "kerascpp_verbose,dispatch,";
  line.append(family).append(",").append(problem).append(",").append(chosen);
  if (!why.empty()) line.append(",why: ").append(why);
  line += '\n';
  std::fputs(line.c_str(), stderr);  // one write per line: lines from threads do not interleave
}

}  // namespace kerascpp::kernels
