// kerascpp verify DIR: every model form in every fixture folder under DIR against Keras's outputs.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "kernels/isa.h"
#include "support/fixture_check.h"

namespace kerascpp::cli {

int verify(const Args& a) {
  Args args = a;
  double tol = std::stod(take_option(args, "--tol", "1e-5"));
  const std::string relative_to = take_option(args, "--relative-to", "output");
  KCPP_CHECK(args.size() == 1 && (relative_to == "element" || relative_to == "output"), ValueError,
             "usage: kerascpp verify DIR [--tol 1e-5] [--relative-to output|element]");
  const auto how =
      relative_to == "output" ? support::Tolerance::output_scale : support::Tolerance::elementwise;
  auto dirs = support::find_fixture_dirs(args[0]);
  KCPP_CHECK(!dirs.empty(), IOError, "No fixture folder (with input_0.npy) under ", args[0]);
  // Which fast paths this run checks (KERASCPP_MAX_ISA and ONEDNN_MAX_CPU_ISA cap them).
  const char* onednn_cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  std::printf("kernels: %s; oneDNN: %s\n", kernels::isa_choice().c_str(),
              onednn_cap ? (std::string("ONEDNN_MAX_CPU_ISA=") + onednn_cap).c_str() : "its own choice");
  int passed = 0, failed = 0;
  for (const auto& dir : dirs) {
    auto results = support::check_fixture_dir(dir, tol, how);
    if (results.empty()) {
      std::printf("FAIL %s: no model file found\n", dir.c_str());
      ++failed;
    }
    for (const auto& r : results) {
      if (r.error.empty())
        std::printf("%s %s/%s  max_abs=%.3g of_scale=%.3g\n", r.ok ? "ok  " : "FAIL", dir.c_str(),
                    r.form.c_str(), r.max_abs, r.max_of_scale);
      else
        std::printf("FAIL %s/%s: %s\n", dir.c_str(), r.form.c_str(), r.error.c_str());
      (r.ok ? passed : failed)++;
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

}  // namespace kerascpp::cli
