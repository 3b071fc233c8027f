// bench/weight_access: get_value / get_weights / batch_get_value called many times on one loaded
// model. Prints the per-call time of the first and last 10% of calls, their ratio, and RSS before
// and after: the seed's K.get_value slowed down and leaked with every call; here the N-th call must
// cost what the first did and memory must stay flat. Not a test: run by hand or by `make bench`.
//
//   build/bench_weight_access tests/fixtures/seed_mlp_2x10/keras3/model.keras 100000
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "support/process.h"
#include "kerascpp/model.h"

namespace {

void run(const char* what, int calls, const std::function<void()>& fn) {
  std::vector<double> ns(calls);
  long before = kerascpp::rss_kb();
  for (int i = 0; i < calls; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    ns[i] = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  }
  long after = kerascpp::rss_kb();
  size_t tenth = std::max(1, calls / 10);
  double first = std::accumulate(ns.begin(), ns.begin() + tenth, 0.0) / tenth;
  double last = std::accumulate(ns.end() - tenth, ns.end(), 0.0) / tenth;
  std::sort(ns.begin(), ns.end());
  std::printf("| %-16s | %8d | %10.0f | %10.0f | %10.0f | %6.3f | %+8ld |\n", what, calls, ns[calls / 2], first, last,
              last / first, after - before);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL [CALLS]\n", argv[0]);
    return 1;
  }
  const int calls = argc > 2 ? std::stoi(argv[2]) : 100000;
  kerascpp::Model m = kerascpp::load_model(argv[1]);
  auto vars = m.weights();
  std::printf("| call             |    calls | median ns  | first 10%% | last 10%%  | ratio  | RSS kB   |\n");
  std::printf("|------------------|----------|------------|------------|------------|--------|----------|\n");
  run("get_value", calls, [&] { (void)kerascpp::get_value(*vars[0]); });
  run("value (view)", calls, [&] { (void)vars[0]->value(); });
  run("get_weights", calls, [&] { (void)m.get_weights(); });
  run("batch_get_value", calls, [&] { (void)kerascpp::batch_get_value(vars); });
  return 0;
}
