// DistributedContext on Gloo (kerascpp/distribute.h): the rendezvous through worker 0's store
// (tcp_store.h), then Gloo's full mesh of TCP pairs; collectives with Gloo's ring algorithms. A Gloo
// error (a peer closed its connection, a timeout) becomes an IOError naming this worker, and the
// context refuses every later collective with the same reason, so that no worker waits on a broken mesh.
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <thread>

#include <gloo/allreduce.h>
#include <gloo/allreduce_ring.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include "kerascpp/distribute.h"
#include "kerascpp/error.h"
#include "training/distribute/tcp_store.h"

namespace kerascpp {

using distribute::StoreClient;
using distribute::StoreServer;

struct DistributedContext::Impl {
  ClusterSpec spec;
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::string failed;  // the first error of a collective; every later one repeats it
  uint32_t tag = 0;

  // Float sums of 64 KB to 2 MB (fit's exchange of every step for most models) go through Gloo's
  // AllreduceRing, made once for their size on a buffer of its own: its pairs' buffers are set up once,
  // where allreduce() sets them up per call. Measured with 2 workers on 2 cores: fit's 0.4 MB exchange
  // of an MLP took 0.8-1.6 ms a step against 2.3-2.8 ms; from 4 MB up allreduce() was faster (4 MB: 2.5
  // against 4.1-5.6 ms, 16 MB: 12 against 22 ms), and it takes those.
  static constexpr size_t kRingMin = 16384, kRingMax = size_t{1} << 19;
  std::unique_ptr<gloo::AllreduceRing<float>> ring;
  std::vector<float> ring_buffer;
  void ring_sum(float* data, size_t count) {
    run("all-reduce", [&] {
      if (!ring || ring_buffer.size() != count) {  // the same on every worker: counts agree
        ring.reset();
        ring_buffer.assign(count, 0.f);
        ring = std::make_unique<gloo::AllreduceRing<float>>(context, std::vector<float*>{ring_buffer.data()},
                                                            static_cast<int>(count));
      }
      std::memcpy(ring_buffer.data(), data, count * sizeof(float));
      ring->run();
      std::memcpy(data, ring_buffer.data(), count * sizeof(float));
    });
  }

  template <typename T>
  void all_reduce(T* data, size_t count, void (*fn)(void*, const void*, const void*, size_t)) {
    if (spec.world_size == 1 || count == 0) return;
    run("all-reduce", [&] {
      gloo::AllreduceOptions o(context);
      o.setOutput(data, count);
      o.setReduceFunction(fn);
      o.setTag(tag++);
      gloo::allreduce(o);
    });
  }

  template <typename F>
  void run(const char* what, F&& f) {
    KCPP_CHECK(failed.empty(), IOError, "Data-parallel ", what, " on worker ", spec.rank, ": the workers stopped "
               "earlier: ", failed);
    try {
      f();
    } catch (const std::exception& e) {  // gloo::Exception, or GLOO_ENFORCE's EnforceNotMet
      failed = std::string(e.what()) + " (a worker stopped, hung past the timeout of " +
               std::to_string(spec.timeout.count() / 1000.0) + " s, or the network failed)";
      KCPP_THROW(IOError, "Data-parallel ", what, " on worker ", spec.rank, " of ", spec.world_size, " failed: ", failed);
    }
  }

  // This worker leaves after an error of its own: its connections close, so that the others' next
  // collective fails at once instead of at the timeout.
  void abort(const std::string& why) {
    if (!failed.empty() || !context) return;
    failed = "this worker stopped after an error: " + why;
    try {
      ring.reset();
      context->closeConnections();
    } catch (const std::exception&) {  // closing what is already broken
    }
  }
};

namespace {

// The address of this machine's interface that routes to `host` (a UDP "connect" sends nothing).
std::string local_address_towards(const std::string& host) {
  if (host == "localhost" || host.rfind("127.", 0) == 0) return "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), "9", &hints, &res) != 0 || !res) return "127.0.0.1";
  std::string out = "127.0.0.1";
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in local{};
  socklen_t len = sizeof local;
  if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
    char buf[INET_ADDRSTRLEN];
    if (::inet_ntop(AF_INET, &local.sin_addr, buf, sizeof buf)) out = buf;
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(res);
  return out;
}

std::vector<char> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

// Every worker says its world size under its rank, once (a second worker with the same rank is refused);
// then each waits for the others' and compares.
void join(StoreClient& store, const ClusterSpec& spec) {
  KCPP_CHECK(store.claim("kerascpp/rank/" + std::to_string(spec.rank), bytes_of(std::to_string(spec.world_size))),
             ValueError, "Another worker already joined the cluster at ", spec.master, " as rank ", spec.rank,
             ": give each worker its own rank (task index) in 0..", spec.world_size - 1);
  const auto deadline = std::chrono::steady_clock::now() + spec.timeout;
  std::vector<int> missing;
  for (int r = 0; r < spec.world_size; ++r) {
    const auto left = std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                                  deadline - std::chrono::steady_clock::now()));
    std::vector<char> v;
    if (!store.try_get("kerascpp/rank/" + std::to_string(r), missing.empty() ? left : std::chrono::milliseconds(1), &v)) {
      missing.push_back(r);
      continue;
    }
    const std::string theirs(v.begin(), v.end());
    KCPP_CHECK(theirs == std::to_string(spec.world_size), ValueError, "Worker ", r, " was started with world_size=",
               theirs, " and worker ", spec.rank, " with world_size=", spec.world_size,
               ": every worker needs the same number of workers");
  }
  if (missing.empty()) return;
  std::string list;
  for (int r : missing) list += (list.empty() ? "" : ", ") + std::to_string(r);
  KCPP_THROW(IOError, "Worker ", spec.rank, ": worker(s) ", list, " of ", spec.world_size, " did not join the cluster at ",
             spec.master, " within ", spec.timeout.count() / 1000.0, " s");
}

}  // namespace

std::shared_ptr<DistributedContext> DistributedContext::connect(const ClusterSpec& spec) {
  KCPP_CHECK(spec.world_size >= 1 && spec.rank >= 0 && spec.rank < spec.world_size, ValueError,
             "Expected a rank in 0..world_size-1 and world_size >= 1. Received: rank=", spec.rank,
             ", world_size=", spec.world_size);
  KCPP_CHECK(spec.timeout.count() > 0, ValueError, "Expected a positive timeout. Received: ", spec.timeout.count(), " ms");
  auto impl = std::make_unique<Impl>();
  impl->spec = spec;
  impl->context = std::make_shared<gloo::rendezvous::Context>(spec.rank, spec.world_size);
  impl->context->setTimeout(spec.timeout);
  if (spec.world_size > 1) {
    KCPP_CHECK(!spec.master.empty(), ValueError, "Data-parallel training on ", spec.world_size, " workers needs the "
               "master's address (ClusterSpec::master, KERASCPP_MASTER or TF_CONFIG's first worker)");
    const auto [host, port] = distribute::split_host_port(spec.master, "the master address");
    std::unique_ptr<StoreServer> server;
    if (spec.rank == 0) server = std::make_unique<StoreServer>(spec.master, port);
    {
      StoreClient store(spec.master, spec.timeout);
      try {
        join(store, spec);
      } catch (const Error&) {
        // Worker 0 serves the others a moment longer, so that they read what they wait for and name
        // their own reason (the same world size, the same missing worker) rather than its going.
        if (server) std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(spec.timeout, std::chrono::seconds(2)));
        throw;
      }
      gloo::transport::tcp::attr attr(spec.host.empty() ? local_address_towards(host).c_str() : spec.host.c_str());
      std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
      impl->run("rendezvous", [&] { impl->context->connectFullMesh(store, device); });
    }
    // Every worker has its pairs once all reach the barrier: the store can close.
    impl->run("rendezvous", [&] { gloo::BarrierOptions o(impl->context); o.setTag(impl->tag++); gloo::barrier(o); });
  }
  return std::shared_ptr<DistributedContext>(new DistributedContext(std::move(impl)));
}

DistributedContext::DistributedContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DistributedContext::~DistributedContext() = default;

int DistributedContext::rank() const { return impl_->spec.rank; }
int DistributedContext::world_size() const { return impl_->spec.world_size; }
const ClusterSpec& DistributedContext::spec() const { return impl_->spec; }

namespace {

template <typename T>
void sum(void* c, const void* a, const void* b, size_t n) {
  gloo::sum<T>(c, a, b, n);
}

void max_double(void* c, const void* a, const void* b, size_t n) { gloo::max<double>(c, a, b, n); }

}  // namespace

void DistributedContext::all_reduce_sum(float* data, size_t count) {
  if (world_size() > 1 && count >= Impl::kRingMin && count <= Impl::kRingMax) return impl_->ring_sum(data, count);
  impl_->all_reduce(data, count, &sum<float>);
}
void DistributedContext::all_reduce_sum(double* data, size_t count) { impl_->all_reduce(data, count, &sum<double>); }
void DistributedContext::all_reduce_max(double* data, size_t count) { impl_->all_reduce(data, count, &max_double); }

void DistributedContext::broadcast(void* data, size_t bytes, int root) {
  KCPP_CHECK(root >= 0 && root < world_size(), ValueError, "broadcast from worker ", root, " of ", world_size());
  if (world_size() == 1 || bytes == 0) return;
  impl_->run("broadcast", [&] {
    gloo::BroadcastOptions o(impl_->context);
    o.setOutput(static_cast<char*>(data), bytes);
    o.setRoot(root);
    o.setTag(impl_->tag++);
    gloo::broadcast(o);
  });
}

void DistributedContext::abort(const std::string& why) { impl_->abort(why); }

void DistributedContext::barrier() {
  if (world_size() == 1) return;
  impl_->run("barrier", [&] {
    gloo::BarrierOptions o(impl_->context);
    o.setTag(impl_->tag++);
    gloo::barrier(o);
  });
}

}  // namespace kerascpp
