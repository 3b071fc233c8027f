// Warnings: what kerascpp reports without failing (a saved optimizer state it skips, a callback whose
// monitored metric is missing), where Keras calls Python's warnings.warn. Every warning goes to one
// sink: by default std::cerr, as "UserWarning: <message>" (Python's format); set_warning_sink() sends
// them elsewhere. The Python package routes them to warnings.warn, so that warnings filters,
// pytest.warns and logging see them.
//
//   kerascpp::WarningSink previous = kerascpp::set_warning_sink([](const std::string& m) { log(m); });
//   kerascpp::warn("Skipping loading optimizer state: ...");   // -> log(...)
//   kerascpp::set_warning_sink(previous);
#pragma once

#include <functional>
#include <string>

namespace kerascpp {

using WarningSink = std::function<void(const std::string& message)>;

// Sends `message` to the sink. Safe from any thread; the sink runs on the caller's thread, outside
// any lock of kerascpp's (it may warn again). What the sink throws reaches warn()'s caller.
void warn(const std::string& message);

// Replaces the sink for the whole process and returns the one it replaces; an empty sink restores the
// default (std::cerr). Like Python's warnings filters, this is process-wide configuration: set it once,
// at start-up (the Python package does on import).
WarningSink set_warning_sink(WarningSink sink);

}  // namespace kerascpp
