#include "support/fixture_check.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "io/npy/npy.h"

namespace kerascpp::support {
namespace fs = std::filesystem;

namespace {
std::vector<Tensor> read_numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<Tensor> out;
  for (int i = 0; fs::exists(dir / (prefix + std::to_string(i) + ".npy")); ++i)
    out.push_back(io::read_npy((dir / (prefix + std::to_string(i) + ".npy")).string()));
  return out;
}
}  // namespace

std::vector<std::string> find_fixture_dirs(const std::string& dir) {
  std::vector<std::string> out;
  KCPP_CHECK(fs::is_directory(dir), IOError, "No directory found at ", dir);
  if (fs::exists(fs::path(dir) / "input_0.npy")) out.push_back(dir);
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_directory() && fs::exists(e.path() / "input_0.npy")) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::pair<std::string, Model>> load_fixture_forms(const std::string& dir,
                                                              std::vector<FormResult>* failures) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  std::vector<std::string> weight_files;
  std::vector<std::pair<std::string, Model>> out;
  auto attempt = [&](const std::string& form, auto&& load) {
    try {
      out.emplace_back(form, load());
    } catch (const std::exception& e) {
      failures->push_back(FormResult{form, false, 0, 0, e.what()});
    }
  };
  for (const auto& f : files) {
    if (!f.ends_with(".json") || f == "meta.json") continue;
    std::string stem = f.substr(0, f.size() - 5);
    std::string w = fs::exists(fs::path(dir) / (stem + ".weights.h5")) ? stem + ".weights.h5" : stem + ".h5";
    weight_files.push_back(w);
    attempt(f + " + " + w, [&] {
      std::ifstream in(fs::path(dir) / f);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      Model m = model_from_json(text);
      m.load_weights((fs::path(dir) / w).string());
      return m;
    });
  }
  for (const auto& f : files) {
    bool full = f.ends_with(".keras") ||
                (f.ends_with(".h5") && !f.ends_with(".weights.h5") &&
                 std::find(weight_files.begin(), weight_files.end(), f) == weight_files.end());
    if (full) attempt(f, [&] { return load_model((fs::path(dir) / f).string()); });
  }
  return out;
}

namespace {
// The bound for each output: tol, or the larger one the fixture's meta.json gives by output name.
std::vector<double> output_tolerances(const std::string& dir, size_t outputs, double tol) {
  std::vector<double> out(outputs, tol);
  std::ifstream f(fs::path(dir) / "meta.json");
  if (!f) return out;
  const Json meta = Json::parse(f);
  const Json own = meta.value("tolerance", Json::object()).value("outputs", Json::object());
  const Json entries = meta.value("outputs", Json::array());
  for (size_t o = 0; o < outputs && o < entries.size(); ++o) {
    const std::string name = entries[o].value("name", "");
    if (own.contains(name)) out[o] = std::max(tol, own[name].get<double>());
  }
  return out;
}
}  // namespace

std::vector<FormResult> check_fixture_dir(const std::string& dir, double tol, Tolerance how) {
  std::vector<FormResult> results;
  auto inputs = read_numbered(dir, "input_");
  auto expected = read_numbered(dir, "output_");
  const std::vector<double> tols = output_tolerances(dir, expected.size(), tol);
  for (auto& [form, model] : load_fixture_forms(dir, &results)) {
    FormResult r{form, true, 0, 0, ""};
    try {
      auto got = model.predict(inputs);
      KCPP_CHECK(got.size() == expected.size(), ValueError, "the model has ", got.size(),
                 " outputs, Keras wrote ", expected.size());
      for (size_t o = 0; o < got.size(); ++o) {
        Tensor e = expected[o].astype(DType::float32);
        KCPP_CHECK(got[o].shape() == e.shape(), ValueError, "output ", o, " has shape ",
                   shape_str(got[o].shape()), ", Keras's has shape ", shape_str(e.shape()));
        const float* a = got[o].data<float>();
        const float* b = e.data<float>();
        // The scale over finite values; where Keras wrote NaN or an infinity, the same is required.
        double scale = 0;
        for (int64_t i = 0; i < e.size(); ++i)
          if (std::isfinite(b[i])) scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
        if (scale == 0) scale = 1;
        for (int64_t i = 0; i < e.size(); ++i) {
          double d = std::fabs(static_cast<double>(a[i]) - b[i]);
          if (!std::isfinite(a[i]) || !std::isfinite(b[i]))
            d = (std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i] ? 0 : INFINITY;
          r.max_abs = std::max(r.max_abs, d);
          r.max_of_scale = std::max(r.max_of_scale, d / scale);
          const double allowed =
              how == Tolerance::elementwise ? tols[o] * (1 + std::fabs(b[i])) : tols[o] * scale;
          if (!(d <= allowed)) r.ok = false;
        }
      }
    } catch (const std::exception& e) {
      r.ok = false;
      r.error = e.what();
    }
    results.push_back(r);
  }
  return results;
}

}  // namespace kerascpp::support
