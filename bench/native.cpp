// bench/native: the kerascpp C++ side of `make bench` (bench/run_all.py). Each mode times one
// scenario of the seed and prints one JSON object with every per-item time, so that the driver can
// plot time against index and compute its own statistics; nothing is summarised here.
//
//   build/bench_native load FILE N            N loads one after another, all kept alive
//                                             (compile=False, as the Keras and Python sides load;
//                                             KERASCPP_BENCH_COMPILE=1 compiles as load_model's default)
//   build/bench_native weights FILE N         N calls each of get_value, get_weights, batch_get_value
//   build/bench_native big FILE R             R loads of one (big) model, each freed before the next
//   build/bench_native read FILE R            R reads of the file's bytes into one buffer
//   build/bench_native predict FILE BATCH N   N calls each of predict and model(x) on (BATCH, ...)
//   build/bench_native step FILE 1 N          N blocks of 100 calls model(x, states) of a stateful model
//                                             whose input is one step of one sample (a recurrent step,
//                                             one call each; items: per call), then of call_into
//                                             (outputs made once)
//   build/bench_native fit FILE SAMPLES N     N epochs of fit (batch 128, or SAMPLES when fewer; Adam,
//                                             sparse categorical crossentropy, no shuffle) on SAMPLES
//                                             seeded random rows
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "support/process.h"
#include "kerascpp/model.h"

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// One timed series: {"name": {"us": [...], "rss_before_kb": ., "rss_after_kb": .}}.
struct Series {
  std::string name;
  std::vector<double> us;
  long rss_before = 0, rss_after = 0;
};

Series time_calls(const std::string& name, int n, const std::function<void()>& fn) {
  Series s{name, std::vector<double>(n), kerascpp::rss_kb(), 0};
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    fn();
    s.us[i] = us_since(t0);
  }
  s.rss_after = kerascpp::rss_kb();
  return s;
}

// The same for calls too short for a clock read each (a recurrent step is a few hundred ns, a
// steady_clock read tens): each item is the mean of a block of `block` calls, as RTNeural times.
Series time_blocks(const std::string& name, int n, int block, const std::function<void()>& fn) {
  Series s{name, std::vector<double>(n), kerascpp::rss_kb(), 0};
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    for (int j = 0; j < block; ++j) fn();
    s.us[i] = us_since(t0) / block;
  }
  s.rss_after = kerascpp::rss_kb();
  return s;
}

void print(const std::vector<Series>& all, const std::string& extra = "") {
  std::printf("{\"series\": {");
  for (size_t k = 0; k < all.size(); ++k) {
    const Series& s = all[k];
    std::printf("%s\"%s\": {\"rss_before_kb\": %ld, \"rss_after_kb\": %ld, \"us\": [", k ? ", " : "",
                s.name.c_str(), s.rss_before, s.rss_after);
    for (size_t i = 0; i < s.us.size(); ++i) std::printf("%s%.3f", i ? "," : "", s.us[i]);
    std::printf("]}");
  }
  std::printf("}%s}\n", extra.c_str());
}

// An input of the model's first input shape with `batch` rows and fixed values.
kerascpp::Tensor make_input(const kerascpp::Model& m, int64_t batch) {
  kerascpp::Shape shape = m.input_shapes().at(0);
  shape[0] = batch;
  for (auto& d : shape) d = d < 0 ? 1 : d;
  kerascpp::Tensor x = kerascpp::Tensor::zeros(shape);
  float* p = x.data<float>();
  for (int64_t i = 0; i < x.size(); ++i) p[i] = static_cast<float>((i * 37 % 101) - 50) / 50.f;
  return x;
}

// The load modes load as the other sides of the bench do: Keras's load_model(compile=False).
kerascpp::LoadOptions bench_load_options() {
  kerascpp::LoadOptions o;
  const char* c = std::getenv("KERASCPP_BENCH_COMPILE");
  o.compile = c != nullptr && std::string(c) == "1";
  return o;
}

int run(const std::string& mode, const std::string& file, int n, int batch) {
  if (mode == "load") {
    std::vector<kerascpp::Model> models;
    models.reserve(n);
    const kerascpp::LoadOptions options = bench_load_options();
    Series s = time_calls("load", n, [&] { models.push_back(kerascpp::load_model(file, options)); });
    // Every earlier model must still work: the first one predicts after all the loads.
    auto y = models.front().predict({make_input(models.front(), 1)});
    print({s}, ", \"first_model_predicts\": " + std::string(y.empty() ? "false" : "true"));
  } else if (mode == "weights") {
    kerascpp::Model m = kerascpp::load_model(file);
    auto vars = m.weights();
    print({time_calls("get_value", n, [&] { (void)kerascpp::get_value(*vars[0]); }),
           time_calls("get_weights", n, [&] { (void)m.get_weights(); }),
           time_calls("batch_get_value", n, [&] { (void)kerascpp::batch_get_value(vars); })});
  } else if (mode == "big") {
    const kerascpp::LoadOptions options = bench_load_options();
    (void)kerascpp::load_model(file, options);  // warm-up: page cache and first-use costs, as on the Keras side
    print({time_calls("load", n, [&] { (void)kerascpp::load_model(file, options); })});
  } else if (mode == "read") {
    std::vector<char> buf;
    print({time_calls("read", n, [&] {
      std::ifstream f(file, std::ios::binary | std::ios::ate);
      buf.resize(static_cast<size_t>(f.tellg()));
      f.seekg(0);
      f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    })});
  } else if (mode == "predict") {
    kerascpp::Model m = kerascpp::load_model(file);
    kerascpp::Tensor x = make_input(m, batch);
    for (int i = 0; i < 10; ++i) (void)m.predict({x}, batch);  // warm-up: arenas and caches
    print({time_calls("predict", n, [&] { (void)m.predict({x}, batch); }),
           time_calls("call", n, [&] { (void)m({x}); })});
  } else if (mode == "step") {  // a stateful model over one step: the states carried between calls
    kerascpp::Model m = kerascpp::load_model(file);
    kerascpp::Tensor x = make_input(m, batch);
    kerascpp::RnnStates stream;
    for (int i = 0; i < 100; ++i) (void)m({x}, stream);  // warm-up
    // call_into: the inputs, outputs and states made once, as a real-time loop keeps them
    const std::vector<kerascpp::Tensor> xs{x}, ys{kerascpp::Tensor::empty(m({x}, stream)[0].shape())};
    print({time_blocks("step", n, 100, [&] { (void)m({x}, stream); }),
           time_blocks("step_into", n, 100, [&] { m.call_into(xs, ys, &stream); })});
  } else if (mode == "fit") {  // batch: the number of samples
    kerascpp::LoadOptions load;
    load.compile = false;
    kerascpp::Model m = kerascpp::load_model(file, load);
    kerascpp::Tensor x = make_input(m, batch);
    std::mt19937 rng(0);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = u(rng);
    const int64_t classes = m.output_shapes().at(0).back();
    kerascpp::Tensor y = kerascpp::Tensor::zeros({batch});
    for (int64_t i = 0; i < batch; ++i) y.data<float>()[i] = static_cast<float>(rng() % classes);
    struct EpochTimer : kerascpp::callbacks::Callback {
      Series* s;
      Clock::time_point t0;
      void on_epoch_begin(int, kerascpp::Logs&) override { t0 = Clock::now(); }
      void on_epoch_end(int, kerascpp::Logs&) override { s->us.push_back(us_since(t0)); }
    };
    Series s{"epoch", {}, kerascpp::rss_kb(), 0};
    auto timer = std::make_shared<EpochTimer>();
    timer->s = &s;
    kerascpp::CompileOptions compile;
    compile.optimizer = "adam";
    compile.loss = "sparse_categorical_crossentropy";
    m.compile(compile);
    kerascpp::FitOptions fit;
    fit.batch_size = static_cast<int>(std::min<int64_t>(128, batch));  // fewer samples: one batch of them
    fit.epochs = n;
    fit.verbose = 0;
    fit.callbacks = {timer};
    fit.shuffle = false;
    m.fit({x}, {y}, fit);
    s.rss_after = kerascpp::rss_kb();
    print({s});
  } else {
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s load|weights|big|read FILE N  or  %s predict|step|fit FILE BATCH|SAMPLES N\n",
                 argv[0], argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const bool predict = mode == "predict" || mode == "fit" || mode == "step";
  if (predict && argc < 5) return 2;
  try {
    return run(mode, argv[2], std::stoi(argv[predict ? 4 : 3]), predict ? std::stoi(argv[3]) : 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_native: %s\n", e.what());
    return 1;
  }
}
