// bench/save_kill: crash safety of save() (issue 19). A child process saves two different models over
// one path, over and over; the parent SIGKILLs it at a random point, then loads the path: it must hold
// the old model or the new one, whole (its weights are compared byte for byte with both). Repeated for
// each file form. A killed save leaves its temporary file (".<name>.tmp-XXXXXX" beside the target)
// behind; they are counted and removed. Not a test: run by `make bench-reliability` (docs/reliability.md).
//
//   build/bench_save_kill tests/fixtures/all_layers_conv2d/keras3 1000 /tmp/save_kill
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "kerascpp/model.h"

namespace {

using namespace kerascpp;
namespace fs = std::filesystem;

bool same_weights(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].shape() != b[i].shape() || std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].nbytes()) != 0) return false;
  return true;
}

struct Result {
  int kills = 0, old_model = 0, new_model = 0, lost = 0, leftovers = 0;
};

// `kills` rounds on `path`: the child alternates save(a) and save(b) (a first) as fast as it can; after
// each kill, read() gives the weights the file holds.
template <typename Save, typename Read>
Result run(const Model& a, const Model& b, const std::string& path, int kills, double save_ms, std::mt19937& rng,
           Save&& save, Read&& read) {
  const std::vector<Tensor> wa = a.get_weights(), wb = b.get_weights();
  Result r;
  save(a);
  std::uniform_real_distribution<double> delay_ms(0.0, 3.0 * save_ms);
  for (int k = 0; k < kills; ++k) {
    int ready[2];
    if (::pipe(ready) != 0) std::abort();
    const pid_t child = ::fork();
    if (child == 0) {
      ::close(ready[0]);
      char c = 1;
      if (::write(ready[1], &c, 1) != 1) ::_exit(3);
      for (int i = 1;; ++i) save(i % 2 ? b : a);
    }
    ::close(ready[1]);
    char c;
    if (::read(ready[0], &c, 1) != 1) std::abort();
    ::close(ready[0]);
    ::usleep(static_cast<useconds_t>(delay_ms(rng) * 1000));
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ++r.kills;
    try {
      const std::vector<Tensor> w = read();
      if (same_weights(w, wa)) ++r.old_model;
      else if (same_weights(w, wb)) ++r.new_model;
      else ++r.lost;
    } catch (const std::exception& e) {
      std::printf("  kill %d: the file does not load: %s\n", k, e.what());
      ++r.lost;
    }
    for (const auto& e : fs::directory_iterator(fs::path(path).parent_path()))
      if (e.path().filename().string().find(".tmp-") != std::string::npos) {
        fs::remove(e.path());
        ++r.leftovers;
      }
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FIXTURE_DIR KILLS [WORK_DIR]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int kills = std::atoi(argv[2]);
  const fs::path work = argc > 3 ? argv[3] : fs::temp_directory_path() / "kerascpp_save_kill";
  fs::create_directories(work);
  const Model a = load_model(dir + "/model.keras");
  Model b = load_model(dir + "/model.keras");
  std::vector<Tensor> w = b.get_weights();
  for (Tensor& t : w) {
    Tensor c = t.copy();
    float* p = c.data<float>();
    for (int64_t i = 0; i < c.size(); ++i) p[i] += 1.0f;
    t = c;
  }
  b.set_weights(w);
  std::mt19937 rng(19);
  bool ok = true;
  for (const char* name : {"model.keras", "model.h5", "model.weights.h5"}) {
    const std::string path = (work / name).string();
    const bool weights_only = std::string(name).ends_with(".weights.h5");  // save_weights, read by load_weights
    Model probe = load_model(dir + "/model.keras");
    auto save = [&](const Model& m) { weights_only ? m.save_weights(path) : m.save(path); };
    auto read = [&] {
      if (!weights_only) return load_model(path).get_weights();
      probe.load_weights(path);
      return probe.get_weights();
    };
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) save(a);
    const double save_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 10;
    const Result r = run(a, b, path, kills, save_ms, rng, save, read);
    std::printf("%-17s save %.2f ms  kills %d: first model %d, second model %d, lost %d; temporary files left %d\n",
                name, save_ms, r.kills, r.old_model, r.new_model, r.lost, r.leftovers);
    std::fflush(stdout);
    ok = ok && r.lost == 0 && r.kills == kills;
  }
  return ok ? 0 : 1;
}
