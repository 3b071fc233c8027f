// Checks a fixture folder written by real Keras (scripts/make_fixtures.py): loads the model in every
// form the folder holds, runs input_<i>.npy and compares with Keras's own output_<i>.npy.
// Forms: every *.keras and every full-model *.h5; every *.json with its weights <stem>.weights.h5 or
// <stem>.h5. Used by `kerascpp verify` and the tests.
//
//   for (const auto& r : io::check_fixture_dir("tests/fixtures/seed_mlp_2x10/keras3", 1e-5))
//     std::cout << r.form << " " << r.max_abs << " " << (r.ok ? "ok" : r.error) << "\n";
#pragma once

#include <string>
#include <vector>

#include "kerascpp/model.h"

namespace kerascpp::io {

struct FormResult {
  std::string form;   // "model.keras", "config.json + config.weights.h5", ...
  bool ok = false;    // loaded, and every output within tolerance
  double max_abs = 0, max_rel = 0;
  std::string error;  // why it failed to load or run, if it did
};

// Directories under `dir` (itself included) that hold input_0.npy, sorted.
std::vector<std::string> find_fixture_dirs(const std::string& dir);
// The model forms in one fixture folder, each loaded as a Keras user would.
std::vector<std::pair<std::string, Model>> load_fixture_forms(const std::string& dir, std::vector<FormResult>* failures);
// How far an output may be from Keras's.
enum class Tolerance {
  elementwise,  // |a - b| <= tol * (1 + |b|) for every element: numpy's allclose, atol = rtol = tol
  // |a - b| <= tol * max(1, max |b|) over each output: relative to the output's scale. Deep image
  // models reach logits of 1e3-1e4, where float32 rounding alone moves the small ones by more
  // than 1e-4 of their own size.
  output_scale,
};
std::vector<FormResult> check_fixture_dir(const std::string& dir, double tol, Tolerance how = Tolerance::elementwise);

}  // namespace kerascpp::io
