// Data-parallel training (kerascpp/distribute.h) with its workers as threads of this process: a
// DistributedContext holds no process-wide state, so N of them in N threads are N workers on Gloo's TCP
// transport. tests/python/test_distribute.py runs the same with worker processes.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

#include "io/npy/npy.h"
#include "kerascpp/distribute.h"
#include "kerascpp/layers.h"
#include "kerascpp/model.h"
#include "fixture_json.h"
#include "training/distribute/replicas.h"

namespace kerascpp {
namespace {

using namespace std::chrono_literals;

// A port no one listens on now (the kernel's choice for port 0).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

ClusterSpec spec(int rank, int size, int port, std::chrono::milliseconds timeout = 20s) {
  ClusterSpec s;
  s.rank = rank, s.world_size = size, s.master = "127.0.0.1:" + std::to_string(port), s.timeout = timeout;
  return s;
}

// Runs f(rank) on `size` threads; each thread's error message (empty when none).
std::vector<std::string> on_workers(int size, const std::function<void(int)>& f) {
  std::vector<std::string> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      try {
        f(r);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Distribute, CollectivesOnThreeWorkers) {
  const int port = free_port();
  std::vector<std::vector<double>> seen(3);
  auto errors = on_workers(3, [&](int r) {
    auto ctx = DistributedContext::connect(spec(r, 3, port));
    EXPECT_EQ(ctx->rank(), r);
    EXPECT_EQ(ctx->is_chief(), r == 0);
    std::vector<float> f = {1.f * r, 2.f, -1.f};
    ctx->all_reduce_sum(f.data(), f.size());
    for (size_t n : {size_t{100000}, size_t{70000}, size_t{100000}}) {  // big sums take Gloo's ring, made per size
      std::vector<float> big(n, 0.5f * static_cast<float>(r + 1));
      ctx->all_reduce_sum(big.data(), big.size());
      EXPECT_EQ(big.front(), 3.f);
      EXPECT_EQ(big.back(), 3.f);
    }
    std::vector<double> d = {0.5 * r, 1e300 * (r == 2)};
    ctx->all_reduce_sum(d.data(), d.size());
    double m = 10.0 - r;
    ctx->all_reduce_max(&m, 1);
    int64_t value = r == 0 ? 1234567890123 : -1;
    ctx->broadcast(&value, sizeof value, 0);
    ctx->barrier();
    seen[static_cast<size_t>(r)] = {f[0], f[1], f[2], d[0], d[1], m, static_cast<double>(value)};
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(errors[r], "");
    EXPECT_EQ(seen[r], (std::vector<double>{3, 6, -3, 1.5, 1e300, 10, 1234567890123.0})) << r;
  }
}

TEST(Distribute, EachWorkerTakesItsShareOfTheGlobalBatch) {
  // rank r of N takes rows [n*r/N, n*(r+1)/N): 10 rows on 3 workers are 3 / 3 / 4, 2 rows are 0 / 1 / 1.
  const int port = free_port();
  std::vector<std::vector<float>> rows(3), few(3);
  auto errors = on_workers(3, [&](int r) {
    auto ctx = DistributedContext::connect(spec(r, 3, port));
    training::Replicas replicas(ctx.get());
    Tensor x = Tensor::from_vector({10, 1}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    Batch b = replicas.local(Batch{{x}, {x}, Tensor()});
    for (int64_t i = 0; i < b.x[0].dim(0); ++i) rows[static_cast<size_t>(r)].push_back(b.x[0].data<float>()[i]);
    Batch small = replicas.local(Batch{{x.slice(0, 2)}, {x.slice(0, 2)}, Tensor()});
    for (int64_t i = 0; i < small.x[0].dim(0); ++i) few[static_cast<size_t>(r)].push_back(small.x[0].data<float>()[i]);
  });
  EXPECT_EQ(errors, std::vector<std::string>(3));
  EXPECT_EQ(rows, (std::vector<std::vector<float>>{{0, 1, 2}, {3, 4, 5}, {6, 7, 8, 9}}));
  EXPECT_EQ(few, (std::vector<std::vector<float>>{{}, {0}, {1}}));
}

struct Data {
  Model model;
  std::vector<Tensor> x, y;
};

Data fixture(const std::string& name) {
  const std::string dir = testing::fixture("training/" + name + "/");
  return {load_model(dir + "model.keras"), {io::read_npy(dir + "x.npy")}, {io::read_npy(dir + "y.npy")}};
}

FitOptions options(int64_t batch) {
  FitOptions o;
  o.epochs = 2, o.verbose = 0, o.batch_size = batch, o.seed = 7;  // one seed: the same shuffle as the workers'
  return o;
}

// Each worker's weights after fit on `workers` workers, and the one-process weights on the same batches.
void expect_same_as_one_process(const std::string& name, int workers, int64_t batch) {
  Data one = fixture(name);
  one.model.fit(one.x, one.y, options(batch));
  const std::vector<Tensor> expected = one.model.get_weights();
  const int port = free_port();
  std::vector<std::vector<Tensor>> got(static_cast<size_t>(workers));
  std::vector<std::map<std::string, std::vector<double>>> histories(static_cast<size_t>(workers));
  auto errors = on_workers(workers, [&](int r) {
    Data d = fixture(name);
    FitOptions o = options(batch);
    o.distributed = DistributedContext::connect(spec(r, workers, port));
    if (r > 0) o.seed = 99;  // the chief's seed wins
    histories[static_cast<size_t>(r)] = d.model.fit(d.x, d.y, o)->history;
    got[static_cast<size_t>(r)] = d.model.get_weights();
  });
  Data initial = fixture(name);
  EXPECT_NE(std::memcmp(expected[0].raw_data(), initial.model.get_weights()[0].raw_data(), expected[0].nbytes()), 0);
  for (int r = 0; r < workers; ++r) {
    ASSERT_EQ(errors[r], "") << r;
    ASSERT_EQ(got[r].size(), expected.size());
    EXPECT_EQ(histories[r], histories[0]) << "every worker logs the same numbers";
    for (size_t i = 0; i < expected.size(); ++i)
      for (int64_t k = 0; k < expected[i].size(); ++k) {
        // Bit for bit between workers: each applies the same summed gradient.
        ASSERT_EQ(got[r][i].data<float>()[k], got[0][i].data<float>()[k]) << r << " " << i << " " << k;
        // Against one process: the gradient summed in another order, so float32 round-off, carried
        // through 2 epochs of Adam; bounded relative to each weight's magnitude.
        const float e = expected[i].data<float>()[k];
        ASSERT_NEAR(got[r][i].data<float>()[k], e, 2e-5f * std::max(1.f, std::fabs(e))) << name << " " << i << " " << k;
      }
  }
}

TEST(Distribute, FitOnTwoWorkersMakesTheUpdatesOfOneProcess) { expect_same_as_one_process("mlp_adam", 2, 16); }

TEST(Distribute, FitOnThreeWorkersWithUnevenShares) {
  // 52 samples in batches of 16: each batch splits 5 / 5 / 6, and the last (4 samples) 1 / 1 / 2.
  expect_same_as_one_process("mlp_adam", 3, 16);
  expect_same_as_one_process("cnn_adam", 3, 10);
}

TEST(Distribute, AModelOverTheRingSizeMakesTheUpdatesOfOneProcess) {
  // 64 -> 256 -> 4: 17,668 parameters, so every step's exchange is over DistributedContext's ring size.
  auto make = [] {
    auto x = layers::Input({64});
    auto h = layers::Dense({{"units", 256}, {"activation", "relu"}})(x);
    Model m({x}, {layers::Dense({{"units", 4}})(h)});
    m.compile({.optimizer = "adam", .loss = "mse"});
    return m;
  };
  std::vector<float> xs(96 * 64), ys(96 * 4);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(0.37f * static_cast<float>(i));
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = std::cos(0.11f * static_cast<float>(i));
  const Tensor x = Tensor::from_vector({96, 64}, xs), y = Tensor::from_vector({96, 4}, ys);
  std::vector<Model> models;  // built here, each with the first one's weights
  for (int i = 0; i < 3; ++i) models.push_back(make());
  for (int i = 1; i < 3; ++i) models[static_cast<size_t>(i)].set_weights(models[0].get_weights());
  const std::vector<Tensor> initial = models[0].get_weights();
  models[0].fit({x}, {y}, options(32));
  const std::vector<Tensor> expected = models[0].get_weights();
  const int port = free_port();
  std::vector<std::vector<Tensor>> got(2);
  auto errors = on_workers(2, [&](int r) {
    Model& m = models[static_cast<size_t>(r + 1)];
    FitOptions o = options(32);
    o.distributed = DistributedContext::connect(spec(r, 2, port));
    m.fit({x}, {y}, o);
    got[static_cast<size_t>(r)] = m.get_weights();
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(errors[r], "");
    for (size_t i = 0; i < expected.size(); ++i)
      for (int64_t k = 0; k < expected[i].size(); ++k) {
        ASSERT_EQ(got[r][i].data<float>()[k], got[0][i].data<float>()[k]);
        const float e = expected[i].data<float>()[k];
        ASSERT_NEAR(got[r][i].data<float>()[k], e, 2e-5f * std::max(1.f, std::fabs(e))) << i << " " << k;
      }
  }
  EXPECT_NE(std::memcmp(expected[0].raw_data(), initial[0].raw_data(), expected[0].nbytes()), 0);
}

// A callback that stops training after batch `at` of the first epoch.
callbacks::CallbackPtr stop_after(int64_t at) {
  auto cb = std::make_shared<callbacks::LambdaCallback>();
  callbacks::LambdaCallback* self = cb.get();
  cb->on_batch_end_fn = [self, at](int64_t batch, Logs&) {
    if (batch == at) self->model()->stop_training = true;
  };
  return cb;
}

TEST(Distribute, AStopOnOneWorkerStopsEveryWorkerAfterTheSameBatch) {
  // Worker 1 alone stops after batch 1; every worker ends where one process stopping there ends.
  Data one = fixture("mlp_adam");
  FitOptions single = options(16);
  single.callbacks = {stop_after(1)};
  const auto expected_history = one.model.fit(one.x, one.y, single)->history;
  const std::vector<Tensor> expected = one.model.get_weights();
  const int port = free_port();
  std::vector<std::vector<Tensor>> got(2);
  std::vector<std::map<std::string, std::vector<double>>> histories(2);
  auto errors = on_workers(2, [&](int r) {
    Data d = fixture("mlp_adam");
    FitOptions o = options(16);
    if (r == 1) o.callbacks = {stop_after(1)};
    o.distributed = DistributedContext::connect(spec(r, 2, port));
    histories[static_cast<size_t>(r)] = d.model.fit(d.x, d.y, o)->history;
    got[static_cast<size_t>(r)] = d.model.get_weights();
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(errors[r], "");
    ASSERT_EQ(histories[r].at("loss").size(), 1u);  // one epoch, then stopped
    EXPECT_NEAR(histories[r].at("loss")[0], expected_history.at("loss")[0], 1e-5);
    for (size_t i = 0; i < expected.size(); ++i)
      for (int64_t k = 0; k < expected[i].size(); ++k)
        ASSERT_NEAR(got[r][i].data<float>()[k], expected[i].data<float>()[k], 2e-5f) << i << " " << k;
  }
}

TEST(Distribute, AStopAfterTheEpochsLastBatchStopsEveryWorkerBeforeValidation) {
  // 52 samples in batches of 16: batch 3 is the epoch's last. Worker 1 stops there, with validation
  // data: no worker validates, and every one ends after the first epoch (a lone worker would wait).
  const int port = free_port();
  std::vector<std::map<std::string, std::vector<double>>> histories(2);
  auto errors = on_workers(2, [&](int r) {
    Data d = fixture("mlp_adam");
    FitOptions o = options(16);
    o.validation_x = d.x, o.validation_y = d.y;
    if (r == 1) o.callbacks = {stop_after(3)};
    o.distributed = DistributedContext::connect(spec(r, 2, port));
    histories[static_cast<size_t>(r)] = d.model.fit(d.x, d.y, o)->history;
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(errors[r], "");
    EXPECT_EQ(histories[r].at("loss").size(), 1u);
    EXPECT_EQ(histories[r].count("val_loss"), 0u);
  }
}

TEST(Distribute, AnErrorOnOneWorkerStopsTheOthersAtOnce) {
  // Worker 1's callback fails after batch 1; worker 1 closes its connections as the error leaves fit,
  // so worker 0 fails at its next exchange with a clear error, long before the 120 s timeout.
  const int port = free_port();
  auto errors = on_workers(2, [&](int r) {
    Data d = fixture("mlp_adam");
    FitOptions o = options(16);
    if (r == 1) {
      auto cb = std::make_shared<callbacks::LambdaCallback>();
      cb->on_batch_end_fn = [](int64_t batch, Logs&) {
        if (batch == 1) throw ValueError("the callback of worker 1 failed");
      };
      o.callbacks = {cb};
    }
    o.distributed = DistributedContext::connect(spec(r, 2, port, 120s));
    d.model.fit(d.x, d.y, o);
  });
  EXPECT_TRUE(has(errors[1], "the callback of worker 1 failed")) << errors[1];
  EXPECT_TRUE(has(errors[0], "Data-parallel all-reduce on worker 0 of 2 failed")) << errors[0];
}

TEST(Distribute, WorkersWithOtherMetricsOrOtherDataAreRefused) {
  int port = free_port();
  auto errors = on_workers(2, [&](int r) {
    Data d = fixture("mlp_adam");
    if (r == 1) d.model.compile({.optimizer = "adam", .loss = "mae", .metrics = {"mse", "mae", "mape"}});
    FitOptions o = options(16);
    o.distributed = DistributedContext::connect(spec(r, 2, port));
    d.model.fit(d.x, d.y, o);
  });
  for (const auto& e : errors) EXPECT_TRUE(has(e, "worker 1's model differs from the chief's")) << e;
  // 52 samples on worker 0, 40 on worker 1: their third batches have 16 and 8 samples.
  port = free_port();
  errors = on_workers(2, [&](int r) {
    Data d = fixture("mlp_adam");
    FitOptions o = options(16);
    o.shuffle = false;
    o.distributed = DistributedContext::connect(spec(r, 2, port, 20s));
    const int64_t n = r == 0 ? 52 : 40;
    d.model.fit({d.x[0].slice(0, n)}, {d.y[0].slice(0, n)}, o);
  });
  for (const auto& e : errors) EXPECT_TRUE(has(e, "read batches of different sizes")) << e;
}

TEST(Distribute, BatchNormalizationAveragesTheWorkersStatistics) {
  // Each worker normalises with its own rows' statistics (Keras's per-replica statistics), so the
  // weights differ from one process's; the moving statistics are the workers' average, the same on all.
  const int port = free_port();
  std::vector<std::vector<Tensor>> got(2);
  auto errors = on_workers(2, [&](int r) {
    Data d = fixture("bn_mlp");
    FitOptions o = options(16);
    o.distributed = DistributedContext::connect(spec(r, 2, port));
    d.model.fit(d.x, d.y, o);
    got[static_cast<size_t>(r)] = d.model.get_weights();
  });
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  Data before = fixture("bn_mlp");
  bool moved = false;
  for (size_t i = 0; i < got[0].size(); ++i)
    for (int64_t k = 0; k < got[0][i].size(); ++k) {
      ASSERT_EQ(got[0][i].data<float>()[k], got[1][i].data<float>()[k]);
      moved = moved || got[0][i].data<float>()[k] != before.model.get_weights()[i].data<float>()[k];
    }
  EXPECT_TRUE(moved);
}

// rows [8i, 8i+8) of t twice, for each i: global batches of 16 whose two halves are the same 8 rows.
Tensor twice_each_eight(const Tensor& t) {
  Shape s = t.shape();
  s[0] *= 2;
  Tensor out = Tensor::empty(s, t.dtype());
  const size_t block = t.nbytes() / static_cast<size_t>(t.dim(0)) * 8;
  for (int64_t i = 0; i < t.dim(0) / 8; ++i)
    for (int copy = 0; copy < 2; ++copy)
      std::memcpy(static_cast<char*>(out.raw_data()) + (2 * i + copy) * block,
                  static_cast<const char*>(t.raw_data()) + i * block, block);
  return out;
}

TEST(Distribute, BatchNormalizationTrainsOnEachWorkersRowsAndAveragesItsMovingStatistics) {
  // Both workers get the same 8 rows of every global batch of 16, so each one's statistics, gradient
  // and moving-statistics update are one process's on batches of those 8 rows: halves summed and
  // updates averaged give that process's weights and moving statistics, bit for bit.
  Data one = fixture("bn_mlp");
  FitOptions single = options(8);
  single.shuffle = false;
  one.model.fit(one.x, one.y, single);
  const std::vector<Tensor> expected = one.model.get_weights();
  const int port = free_port();
  std::vector<std::vector<Tensor>> got(2);
  auto errors = on_workers(2, [&](int r) {
    Data d = fixture("bn_mlp");
    FitOptions o = options(16);
    o.shuffle = false;
    o.distributed = DistributedContext::connect(spec(r, 2, port));
    d.model.fit({twice_each_eight(d.x[0])}, {twice_each_eight(d.y[0])}, o);
    got[static_cast<size_t>(r)] = d.model.get_weights();
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(errors[r], "");
    for (size_t i = 0; i < expected.size(); ++i)  // moving_mean and moving_variance among them
      for (int64_t k = 0; k < expected[i].size(); ++k)
        ASSERT_EQ(got[r][i].data<float>()[k], expected[i].data<float>()[k]) << i << " " << k;
  }
}

TEST(Distribute, EvaluateSumsTheWorkersMetrics) {
  Data one = fixture("mlp_adam");
  EvaluateOptions eo;
  eo.verbose = 0, eo.batch_size = 10;
  const Logs expected = one.model.evaluate(one.x, one.y, eo);
  const int port = free_port();
  std::vector<Logs> got(3);
  auto errors = on_workers(3, [&](int r) {
    Data d = fixture("mlp_adam");
    EvaluateOptions o = eo;
    o.distributed = DistributedContext::connect(spec(r, 3, port));
    got[static_cast<size_t>(r)] = d.model.evaluate(d.x, d.y, o);
  });
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(errors[r], "");
    for (const auto& [k, v] : expected.items()) EXPECT_NEAR(got[r].at(k), v, 1e-6 * std::fabs(v)) << k;
  }
}

TEST(Distribute, BadClustersAreClearErrors) {
  EXPECT_TRUE(has(testing::error_of<ValueError>([] { DistributedContext::connect(spec(2, 2, 1)); }), "rank=2"));
  EXPECT_TRUE(has(testing::error_of<ValueError>([] {
    ClusterSpec s = spec(0, 2, 1);
    s.master = "no-port";
    DistributedContext::connect(s);
  }), "host:port"));
  // No worker 0 serving the master: the error names the address, after the timeout.
  const std::string unreachable = testing::error_of<IOError>([] { DistributedContext::connect(spec(1, 2, free_port(), 300ms)); });
  EXPECT_TRUE(has(unreachable, "Cannot reach the master 127.0.0.1:")) << unreachable;
  // A different world size on one worker: both are told.
  int port = free_port();
  auto errors = on_workers(2, [&](int r) { DistributedContext::connect(spec(r, r == 0 ? 2 : 3, port, 3s)); });
  for (const auto& e : errors) EXPECT_TRUE(has(e, "world_size=3")) << e;
  // Two workers with the same rank: the second to join is refused by name.
  port = free_port();
  errors = on_workers(3, [&](int r) { DistributedContext::connect(spec(r == 2 ? 1 : r, 3, port, 2s)); });
  int refused = 0;
  for (const auto& e : errors) refused += has(e, "already joined the cluster") ? 1 : 0;
  EXPECT_EQ(refused, 1) << errors[0] << " | " << errors[1] << " | " << errors[2];
  // A worker that never comes: the others stop at the timeout, naming it.
  port = free_port();
  errors = on_workers(2, [&](int r) { DistributedContext::connect(spec(r, 3, port, 500ms)); });
  for (const auto& e : errors) EXPECT_TRUE(has(e, "worker(s) 2 of 3 did not join")) << e;
}

TEST(Distribute, MismatchedModelsAreRefusedOnEveryWorker) {
  const int port = free_port();
  std::vector<std::vector<Tensor>> before(2), after(2);
  auto errors = on_workers(2, [&](int r) {
    Data d = fixture(r == 0 ? "mlp_adam" : "bn_mlp");
    FitOptions o = options(16);
    o.distributed = DistributedContext::connect(spec(r, 2, port));
    before[static_cast<size_t>(r)] = d.model.get_weights();
    try {
      d.model.fit(d.x, d.y, o);
    } catch (...) {
      after[static_cast<size_t>(r)] = d.model.get_weights();
      throw;
    }
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(has(errors[r], "worker 1's model differs from the chief's")) << errors[r];
    ASSERT_EQ(after[r].size(), before[r].size());
    for (size_t i = 0; i < before[r].size(); ++i)
      EXPECT_EQ(std::memcmp(after[r][i].raw_data(), before[r][i].raw_data(), before[r][i].nbytes()), 0);
  }
}

TEST(Distribute, AWorkerThatLeavesStopsTheOthers) {
  // Worker 1 goes (its context closes its connections) while worker 0 waits in a collective: worker 0
  // gets an IOError naming the failure, not a hang; its later collectives refuse at once.
  const int port = free_port();
  auto errors = on_workers(2, [&](int r) {
    auto ctx = DistributedContext::connect(spec(r, 2, port, 60s));
    if (r == 1) return;
    std::vector<float> v(100000, 1.f);  // the ring of big sums
    try {
      ctx->all_reduce_sum(v.data(), v.size());
    } catch (const IOError& e) {
      EXPECT_TRUE(has(e.what(), "on worker 0 of 2 failed")) << e.what();
      ctx->barrier();  // refused at once, with the first failure
    }
  });
  EXPECT_EQ(errors[1], "");
  EXPECT_TRUE(has(errors[0], "the workers stopped earlier")) << errors[0];
}

}  // namespace
}  // namespace kerascpp
