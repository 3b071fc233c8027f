// Facts about the running process, for benchmarks and the CLI (tools/support: not part of the library).
#pragma once

namespace kerascpp {

// Resident set size in kB (VmRSS of /proc/self/status); -1 where unavailable.
long rss_kb();

}  // namespace kerascpp
