// libFuzzer harness: load_model_from_memory as a whole (the form sniffed from the bytes, .h5 or
// .keras, the config built, the weights and optimizer state read) under the default LoadLimits.
// A model that loads is also called once on zeros of its input shapes, so that what the config
// built is run. Anything but kerascpp's own errors is a finding.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "fuzz/run_model.h"
#include "kerascpp/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kerascpp;
  fuzz::expected_errors([&] {
    Model m = load_model_from_memory(data, size, "fuzz.keras");
    fuzz::run_once(m);
  });
  return 0;
}
