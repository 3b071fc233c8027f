// What the fuzz harnesses share: the errors a hostile input may end in. kerascpp refuses bad input
// with its own exception types; anything else escaping (std::bad_alloc, std::out_of_range, a
// nlohmann error, ...) is a finding, and the harness lets it through so that libFuzzer reports it.
#pragma once

#include "kerascpp/error.h"

namespace kerascpp::fuzz {

template <typename F>
void expected_errors(F&& f) {
  try {
    f();
  } catch (const IOError&) {
  } catch (const ValueError&) {
  } catch (const NotImplementedError&) {
  } catch (const TypeError&) {
  }
}

}  // namespace kerascpp::fuzz
