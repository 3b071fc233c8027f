// Checks a fixture folder written by real Keras (scripts/make_fixtures.py): loads the model in every
// form the folder holds, runs input_<i>.npy and compares with Keras's own output_<i>.npy.
// Forms: every *.keras and every full-model *.h5; every *.json with its weights <stem>.weights.h5 or
// <stem>.h5. Used by `kerascpp verify` and the tests; not part of the library (tools/support is linked
// by the CLI, the tests and the benchmarks only).
//
//   for (const auto& r : support::check_fixture_dir("tests/fixtures/seed_mlp_2x10/keras3"))
//     std::cout << r.form << " " << r.max_abs << " " << (r.ok ? "ok" : r.error) << "\n";
#pragma once

#include <string>
#include <vector>

#include "kerascpp/model.h"

namespace kerascpp::support {

struct FormResult {
  std::string form;         // "model.keras", "config.json + config.weights.h5", ...
  bool ok = false;          // loaded, and every output within tolerance
  double max_abs = 0;       // max |a - b| over every output
  double max_of_scale = 0;  // max over outputs of max |a - b| / max |b| (1 for an all-zero b)
  std::string error;        // why it failed to load or run, if it did
};

// Directories under `dir` (itself included) that hold input_0.npy, sorted.
std::vector<std::string> find_fixture_dirs(const std::string& dir);
// The model forms in one fixture folder, each loaded as a Keras user would.
std::vector<std::pair<std::string, Model>> load_fixture_forms(const std::string& dir,
                                                              std::vector<FormResult>* failures);
// How far an output may be from Keras's. The fixtures' outputs were computed by TensorFlow on another
// machine, in float32: they carry that machine's round-off (oneDNN and Eigen pick kernels, and with
// them summation orders, per CPU), and so does kerascpp's result here. Measured against float64 twins
// of every fixture model (scripts/roundoff_study.py), that round-off stays below 3.2e-7 of each
// output's scale (max |y|), for TensorFlow and kerascpp alike; hence the default of 1e-5 of the
// output's scale, 30x that. A fixture whose outputs legitimately move more says so in its meta.json,
// with the reason: "tolerance": {"outputs": {"<output name>": 1e-4}, "why": "..."}; the larger bound
// wins.
enum class Tolerance {
  // |a - b| <= tol * max |b| over each output (over its finite values; 1 where they are all zero).
  // NaN and infinities must match exactly.
  output_scale,
  // |a - b| <= tol * (1 + |b|) for every element (numpy's allclose, atol = rtol = tol): strict on
  // large values, loose on small outputs.
  elementwise,
};
std::vector<FormResult> check_fixture_dir(const std::string& dir, double tol = 1e-5,
                                          Tolerance how = Tolerance::output_scale);

}  // namespace kerascpp::support
