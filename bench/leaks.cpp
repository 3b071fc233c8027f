// bench/leaks: RSS growth over many load / free cycles and many predicts (issue 19). A model loaded
// and dropped must leave nothing behind, and predict must keep nothing between calls: the RSS after
// the run is compared with the RSS after a warm-up of 1% of it (allocator pools and lazily mapped
// code are then settled), and the growth must stay under 1 MB (else it exits 1). Not a test: run by
// `make bench-reliability` (docs/reliability.md).
//
//   build/bench_leaks tests/fixtures/seed_mlp_2x10/keras3 100000 1000000
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/npy/npy.h"
#include "kerascpp/model.h"
#include "support/process.h"

namespace {

using namespace kerascpp;
using Clock = std::chrono::steady_clock;

// Runs f(i) for i in [0, n): RSS after the first n/100 (the baseline) and after all of them.
template <typename F>
bool measure(const char* what, long n, F&& f) {
  const long warm = std::max(1L, n / 100);
  for (long i = 0; i < warm; ++i) f(i);
  const long before = rss_kb();
  const auto t0 = Clock::now();
  for (long i = warm; i < n; ++i) f(i);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const long after = rss_kb();
  std::printf("%-34s %9ld runs  %7.2f s  RSS %ld kB -> %ld kB  growth %+ld kB  %s\n", what, n, s, before, after,
              after - before, after - before < 1024 ? "ok (< 1 MB)" : "OVER 1 MB");
  std::fflush(stdout);
  return after - before < 1024;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FIXTURE_DIR [LOADS=100000] [PREDICTS=1000000]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const long loads = argc > 2 ? std::atol(argv[2]) : 100000;
  const long predicts = argc > 3 ? std::atol(argv[3]) : 1000000;
  std::vector<char> keras, h5;
  for (auto [name, bytes] : {std::pair{"/model.keras", &keras}, std::pair{"/model.h5", &h5}}) {
    std::ifstream in(dir + name, std::ios::binary);
    bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const Tensor x = io::read_npy(dir + "/input_0.npy");
  size_t sink = 0;
  bool ok = measure(".keras load_model_from_memory", loads, [&](long) {
    sink += load_model_from_memory(keras.data(), keras.size(), "model.keras").weights().size();
  });
  if (!h5.empty())
    ok = measure(".h5 load_model_from_memory", loads, [&](long) {
           sink += load_model_from_memory(h5.data(), h5.size(), "model.h5").weights().size();
         }) && ok;
  ok = measure("load_model from the file", loads / 10,
               [&](long) { sink += load_model(dir + "/model.keras").weights().size(); }) && ok;
  const Model m = load_model(dir + "/model.keras");
  ok = measure("predict", predicts, [&](long) { sink += m.predict({x})[0].size(); }) && ok;
  ok = measure("get_weights", predicts / 10, [&](long) { sink += m.get_weights().size(); }) && ok;
  std::printf("%s (%zu)\n", ok ? "no growth of 1 MB or more" : "GROWTH of 1 MB or more", sink);
  return ok ? 0 : 1;
}
