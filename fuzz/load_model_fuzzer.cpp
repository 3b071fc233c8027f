// libFuzzer harness: load_model_from_memory as a whole (the form sniffed from the bytes, .h5 or
// .keras, the config built, the weights and optimizer state read) under the default LoadLimits,
// with allow_libhdf5 = false as for an untrusted file: libhdf5 is not kerascpp's code, and damage it
// would be handed is refused by kerascpp's reader first (libhdf5_* regressions: fuzzing found such
// inputs crashing libhdf5 1.10; tests/cpp/containers/keras_h5_reader_test.cpp replays them with
// libhdf5 allowed). A model that loads is also called once on zeros of its input shapes, so that
// what the config built is run. Anything but kerascpp's own errors is a finding.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "fuzz/run_model.h"
#include "kerascpp/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kerascpp;
  fuzz::expected_errors([&] {
    LoadOptions options;
    options.limits.allow_libhdf5 = false;
    Model m = load_model_from_memory(data, size, "fuzz.keras", options);
    fuzz::run_once(m);
  });
  return 0;
}
