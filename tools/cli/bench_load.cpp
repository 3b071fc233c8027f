// kerascpp bench-load FILE --copies N [--json] [--check DIR]: loads N models one after another, all
// kept alive, and reports per-model load time (median, first and last 10%) and RSS growth. With
// --check, the first and the last model predict DIR's inputs and are compared with its outputs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>

#include "commands.h"
#include "io/npy/npy.h"
#include "support/process.h"
#include "kerascpp/model.h"

namespace kerascpp::cli {
namespace {

double max_error(const Model& m, const std::string& dir) {
  std::vector<Tensor> in, out;
  for (int i = 0; std::ifstream(dir + "/input_" + std::to_string(i) + ".npy").good(); ++i)
    in.push_back(io::read_npy(dir + "/input_" + std::to_string(i) + ".npy"));
  for (int i = 0; std::ifstream(dir + "/output_" + std::to_string(i) + ".npy").good(); ++i)
    out.push_back(io::read_npy(dir + "/output_" + std::to_string(i) + ".npy"));
  auto got = m.predict(in);
  KCPP_CHECK(got.size() == out.size(), ValueError, "output count differs from ", dir);
  double err = 0;
  for (size_t o = 0; o < got.size(); ++o)
    for (int64_t i = 0; i < got[o].size(); ++i)
      err = std::max(err, std::fabs(static_cast<double>(got[o].data<float>()[i]) - out[o].data<float>()[i]));
  return err;
}

}  // namespace

int bench_load(const Args& a) {
  Args args = a;
  const int copies = std::stoi(take_option(args, "--copies", "1000"));
  const bool json = take_flag(args, "--json");
  const std::string check = take_option(args, "--check", "");
  KCPP_CHECK(args.size() == 1 && copies > 0, ValueError, "usage: kerascpp bench-load FILE --copies N [--json] [--check DIR]");
  std::vector<Model> models;
  models.reserve(copies);
  std::vector<double> us(copies);
  const long rss_before = kerascpp::rss_kb();
  for (int i = 0; i < copies; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    models.push_back(load_model(args[0]));
    us[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
  const long rss_after = kerascpp::rss_kb();
  std::vector<double> sorted = us;
  std::sort(sorted.begin(), sorted.end());
  const size_t tenth = std::max<size_t>(1, copies / 10);
  const double median = sorted[copies / 2];
  const double first = std::accumulate(us.begin(), us.begin() + tenth, 0.0) / tenth;
  const double last = std::accumulate(us.end() - tenth, us.end(), 0.0) / tenth;
  if (json) {
    std::printf("{\"copies\": %d, \"median_us\": %.2f, \"first10_us\": %.2f, \"last10_us\": %.2f, \"ratio\": %.4f, "
                "\"rss_before_kb\": %ld, \"rss_after_kb\": %ld}\n",
                copies, median, first, last, last / first, rss_before, rss_after);
  } else {
    std::printf("loaded %d copies of %s, all kept alive\n", copies, args[0].c_str());
    std::printf("  per model: median %.1f us, min %.1f us, max %.1f us\n", median, sorted.front(), sorted.back());
    std::printf("  first 10%%: %.1f us, last 10%%: %.1f us, last/first: %.3f\n", first, last, last / first);
    std::printf("  RSS: %ld kB before, %ld kB after (%.1f kB per model)\n", rss_before, rss_after,
                static_cast<double>(rss_after - rss_before) / copies);
  }
  if (!check.empty()) {
    double e_first = max_error(models.front(), check), e_last = max_error(models.back(), check);
    std::printf("  model #1 vs Keras: max abs error %.3g; model #%d: %.3g\n", e_first, copies, e_last);
    return (e_first <= 1e-5 && e_last <= 1e-5) ? 0 : 1;
  }
  return 0;
}

}  // namespace kerascpp::cli
