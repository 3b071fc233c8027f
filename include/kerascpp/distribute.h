// Data-parallel training across processes and machines (Keras's tf.distribute.MultiWorkerMirroredStrategy),
// on Gloo: each worker is one process (or one thread: a context holds no process-wide state) with a copy
// of the model; fit and evaluate split every global batch between the workers and average the gradients.
//
//   kerascpp::ClusterSpec spec = kerascpp::ClusterSpec::from_environment();  // TF_CONFIG, or the launcher's
//   auto ctx = kerascpp::DistributedContext::connect(spec);  // waits for every worker (spec.timeout)
//   kerascpp::FitOptions o;
//   o.distributed = ctx;  // same arrays on every worker; worker 0 (the chief) alone writes files
//   model.fit(x, y, o);
//
// Rendezvous: worker 0 serves a small key-value store on spec.master (host:port) while the workers
// exchange their Gloo addresses; after that every byte goes through Gloo's TCP pairs.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace kerascpp {

struct ClusterSpec {
  int rank = 0;        // this worker, 0 .. world_size - 1; worker 0 is the chief
  int world_size = 1;  // the number of workers
  std::string master;  // "host:port" where worker 0 serves the rendezvous ("" with one worker)
  // The address the other workers reach this one at; "" picks the interface that routes to the master.
  std::string host;
  // How long a collective (and the rendezvous) may wait for the other workers before a TimeoutError:
  // a worker that died or hangs stops the others within it.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};

  // The cluster the environment describes, as a Keras user sets it up:
  //   - TF_CONFIG = {"cluster": {"chief": [...], "worker": ["host:port", ...]}, "task": {"type": "worker",
  //     "index": i}}: rank = the task's place in chief + worker, master = the first address;
  //   - KERASCPP_RANK, KERASCPP_WORLD_SIZE, KERASCPP_MASTER (python -m kerascpp.distribute.launch);
  //   - OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE under mpirun, with KERASCPP_MASTER;
  //   - none of them: one worker.
  // KERASCPP_DISTRIBUTED_TIMEOUT (seconds) sets timeout. ValueError naming a malformed variable.
  static ClusterSpec from_environment();
};

class DistributedContext {
 public:
  // Connects this worker to the others (every worker calls it with the same world_size and master).
  // ValueError: a rank outside [0, world_size), another worker with the same rank or a different
  // world_size. IOError: the master cannot be reached or served within the timeout.
  static std::shared_ptr<DistributedContext> connect(const ClusterSpec& spec);
  ~DistributedContext();
  DistributedContext(const DistributedContext&) = delete;
  DistributedContext& operator=(const DistributedContext&) = delete;

  int rank() const;
  int world_size() const;
  bool is_chief() const { return rank() == 0; }
  const ClusterSpec& spec() const;

  // Collectives; every worker calls the same ones in the same order, one at a time per context (fit
  // and evaluate use it from their thread). Errors (IOError) name the worker that stopped, or the timeout.
  void all_reduce_sum(float* data, size_t count);
  void all_reduce_sum(double* data, size_t count);
  void all_reduce_max(double* data, size_t count);
  void broadcast(void* data, size_t bytes, int root = 0);
  void barrier();
  // This worker stops after an error of its own (fit and evaluate call it as they throw): its
  // connections close, so the others' next collective fails at once, and this context refuses every
  // later one with `why`.
  void abort(const std::string& why);

 private:
  struct Impl;
  explicit DistributedContext(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

using DistributedContextPtr = std::shared_ptr<DistributedContext>;

}  // namespace kerascpp
