// bench/train_soak: trains one model for many epochs with the seed users' habits — get_weights()
// in every batch callback and get_value of every weight at every epoch end — and reports the time
// and RSS of the first and last 10% of epochs. Training must never slow down or grow with history:
// the tape is freed after every step and reading weights leaves nothing behind. Not a test: run by
// hand or by `make bench`.
//
//   build/bench_train_soak tests/fixtures/training/mlp_adam 1000
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "support/process.h"
#include "io/npy/npy.h"
#include "kerascpp/model.h"

namespace {

using namespace kerascpp;

class Habits : public callbacks::Callback {
 public:
  std::vector<double> epoch_ms;
  std::vector<long> epoch_rss;
  void on_epoch_begin(int, Logs&) override { t0_ = std::chrono::steady_clock::now(); }
  void on_train_batch_end(int64_t, Logs&) override { sink_ += model()->get_weights().size(); }
  void on_epoch_end(int, Logs&) override {
    for (const auto& v : model()->weights()) sink_ += get_value(*v).size();
    epoch_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count());
    epoch_rss.push_back(rss_kb());
  }
  size_t sink_ = 0;

 private:
  std::chrono::steady_clock::time_point t0_;
};

double mean(const std::vector<double>& v, size_t from, size_t to) {
  return std::accumulate(v.begin() + from, v.begin() + to, 0.0) / static_cast<double>(to - from);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <training fixture folder> [epochs=1000]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 1000;
  Model m = load_model(dir + "/model.keras");
  if (!m.compiled()) m.compile({.optimizer = "adam", .loss = "mse"});
  std::vector<Tensor> x = {io::read_npy(dir + "/x.npy")}, y = {io::read_npy(dir + "/y.npy")};
  auto habits = std::make_shared<Habits>();
  FitOptions o;
  o.epochs = epochs, o.batch_size = 16, o.verbose = 0, o.seed = 1, o.callbacks = {habits};
  const long rss0 = rss_kb();
  auto t0 = std::chrono::steady_clock::now();
  m.fit(x, y, o);
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t n = habits->epoch_ms.size(), tenth = std::max<size_t>(1, n / 10);
  const double first = mean(habits->epoch_ms, 0, tenth), last = mean(habits->epoch_ms, n - tenth, n);
  std::printf("| epochs | samples | total s | first 10%% ms/epoch | last 10%% ms/epoch | last/first | RSS after epoch 1 | RSS at end | growth kB |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  std::printf("| %zu | %lld | %.2f | %.3f | %.3f | %.2f | %ld | %ld | %+ld |\n", n, static_cast<long long>(x[0].dim(0)), total,
              first, last, last / first, habits->epoch_rss.front(), habits->epoch_rss.back(),
              habits->epoch_rss.back() - habits->epoch_rss.front());
  std::fprintf(stderr, "(RSS before fit %ld kB; checksum %zu)\n", rss0, habits->sink_);
  return 0;
}
