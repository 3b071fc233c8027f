// libFuzzer harness: a JSON config to a model (any Keras dialect, canonicalised, then built), with the
// checks load_model makes (config size and depth, layers, nodes, weight bytes) at their defaults, the
// weights held to what a 12 MiB file may ask for (64 MiB). A model that builds is called once on
// zeros of its input shapes. Anything but kerascpp's own errors is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "fuzz/run_model.h"
#include "io/model_builder.h"
#include "io/python_json.h"
#include "kerascpp/model.h"
#include "layers/build_budget.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kerascpp;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const LoadLimits limits;
  if (text.size() > limits.max_config_bytes) return 0;
  fuzz::expected_errors([&] {
    Json config;
    try {
      config = io::parse_python_json(text, limits.max_json_depth, "fuzz.json");
    } catch (const Json::exception&) {
      return;  // not JSON: load_model's ValueError
    }
    BuildBudget budget = io::budget_of(limits, 12u << 20, "a 12 MiB file");  // 64 MiB of weights
    const CustomObjects custom;
    Model m = io::build_model(std::move(config), 0, Json::object(), custom, &budget);
    fuzz::run_once(m);
  });
  return 0;
}
