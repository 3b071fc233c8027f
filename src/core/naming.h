// Automatic names for layers made without one ("dense", "dense_1", ...), as Keras gives them.
// The counters are the only process-wide mutable state of kerascpp; clear_session() resets them and
// touches nothing else.
#pragma once

#include <string>
#include <string_view>

namespace kerascpp {

std::string unique_name(std::string_view prefix);
void reset_automatic_names();

}  // namespace kerascpp
