// The subcommands of the kerascpp CLI. Each takes its arguments (after the command name) and returns
// the exit code; errors are thrown and printed by main.
#pragma once

#include <string>
#include <vector>

namespace kerascpp::cli {

using Args = std::vector<std::string>;

int info(const Args& args);
int predict(const Args& args);
int verify(const Args& args);
int bench_load(const Args& args);
int convert(const Args& args);

// Shared argument helpers: "--name value" options.
std::string take_option(Args& args, const std::string& name, const std::string& fallback);
std::vector<std::string> take_all(Args& args, const std::string& name);
bool take_flag(Args& args, const std::string& name);

}  // namespace kerascpp::cli
