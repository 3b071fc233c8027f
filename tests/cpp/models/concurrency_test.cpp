// One shared model, many threads (design.md: const, thread-safe inference): eight threads predicting
// at once get the one-thread results bit for bit, and loads, saves and weight reads run beside them.
// `make test-tsan` runs this suite under ThreadSanitizer with KCPP_CONCURRENCY_PREDICTS=100000 (the
// predicts per thread on the MLP; the larger models take a twentieth); `make test` runs 2,000.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "../test_paths.h"
#include "io/npy/npy.h"
#include "kerascpp/model.h"

namespace kerascpp {
namespace {

int predicts_per_thread() {
  const char* env = std::getenv("KCPP_CONCURRENCY_PREDICTS");
  return env ? std::atoi(env) : 2000;
}

bool identical(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

std::vector<Tensor> inputs_of(const std::string& dir) {
  std::vector<Tensor> in;
  for (int i = 0; std::filesystem::exists(dir + "/input_" + std::to_string(i) + ".npy"); ++i)
    in.push_back(io::read_npy(dir + "/input_" + std::to_string(i) + ".npy"));
  return in;
}

// Runs `threads` copies of work(thread index) at once, started together.
template <typename F>
void together(int threads, F&& work) {
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ++ready;
      while (ready.load() < threads) std::this_thread::yield();
      work(t);
    });
  for (auto& th : pool) th.join();
}

TEST(Concurrency, EightThreadsPredictBitIdenticalResults) {
  const int n = predicts_per_thread();
  struct Case {
    const char* dir;
    int predicts;
  };
  for (const Case& c : {Case{"seed_mlp_2x10/keras3", n}, Case{"all_layers_conv2d/keras3", std::max(1, n / 20)},
                        Case{"seq_embedding_lstm_gru/keras3", std::max(1, n / 20)},
                        Case{"seq_transformer/keras3", std::max(1, n / 20)}}) {
    SCOPED_TRACE(c.dir);
    const std::string dir = testing::fixture(c.dir);
    const Model m = load_model(dir + "/model.keras");
    const std::vector<Tensor> in = inputs_of(dir);
    const std::vector<Tensor> expected = m.predict(in);
    std::atomic<int64_t> mismatches{0}, runs{0};
    together(8, [&](int) {
      for (int r = 0; r < c.predicts; ++r) {
        const std::vector<Tensor> got = m.predict(in);
        for (size_t i = 0; i < got.size(); ++i)
          if (!identical(got[i], expected[i])) ++mismatches;
        ++runs;
      }
    });
    EXPECT_EQ(runs.load(), 8 * c.predicts);
    EXPECT_EQ(mismatches.load(), 0);
  }
}

// Loads, saves (each thread its own file), get_weights and get_value on one shared model, and
// predicts on it, all at once: every result is the one a single thread gets.
TEST(Concurrency, LoadsSavesAndWeightReadsBesidePredicts) {
  const std::string dir = testing::fixture("nested_model/keras3");
  const Model shared = load_model(dir + "/model.keras");
  const std::vector<Tensor> in = inputs_of(dir);
  const std::vector<Tensor> expected = shared.predict(in);
  const std::vector<Tensor> weights = shared.get_weights();
  const int rounds = std::max(2, predicts_per_thread() / 200);
  std::atomic<int> failures{0};
  together(8, [&](int t) {
    const std::string path = testing::temp_path("concurrency_" + std::to_string(t) + ((t / 4) % 2 ? ".h5" : ".keras"));
    for (int r = 0; r < rounds; ++r) {
      switch (t % 4) {
        case 0: {  // load a file and predict with it
          Model mine = load_model(dir + (r % 2 ? "/model.h5" : "/model.keras"));
          if (!identical(mine.predict(in)[0], expected[0])) ++failures;
          break;
        }
        case 1: {  // save the shared model, then load what was saved
          shared.save(path);
          if (!identical(load_model(path).predict(in)[0], expected[0])) ++failures;
          break;
        }
        case 2: {  // read its weights
          std::vector<Tensor> w = shared.get_weights();
          for (size_t i = 0; i < w.size(); ++i)
            if (!identical(w[i], weights[i])) ++failures;
          for (const VariablePtr& v : shared.weights()) get_value(*v);
          break;
        }
        default:  // predict on it
          if (!identical(shared.predict(in)[0], expected[0])) ++failures;
      }
    }
  });
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace kerascpp
