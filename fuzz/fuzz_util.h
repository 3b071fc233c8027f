// What the fuzz harnesses share: the errors a hostile input may end in. kerascpp refuses bad input
// with its own exception types; anything else escaping (std::bad_alloc, std::out_of_range, a
// nlohmann error, ...) is a finding, and the harness lets it through so that libFuzzer reports it.
// KCPP_FUZZ_VERBOSE=1 prints each refusal (to triage a replayed input).
#pragma once

#include <cstdio>
#include <cstdlib>

#include "kerascpp/error.h"

namespace kerascpp::fuzz {

inline void refused(const Error& e) {
  static const bool verbose = std::getenv("KCPP_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "refused: %s\n", e.what());
}

template <typename F>
void expected_errors(F&& f) {
  try {
    f();
  } catch (const IOError& e) {
    refused(e);
  } catch (const ValueError& e) {
    refused(e);
  } catch (const NotImplementedError& e) {
    refused(e);
  } catch (const TypeError& e) {
    refused(e);
  }
}

}  // namespace kerascpp::fuzz
