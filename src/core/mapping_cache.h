// MappingCache: big allocations kept for reuse while a training loop runs (issue 21).
//
// A tensor of Storage::kMapBytes or more is its own anonymous mapping (kerascpp/tensor.h), returned to
// the system when freed; so is one of kScopedBytes or more made while a scope lives on its thread. A
// training step allocates the same activations and gradients every step, so each step faulted in
// fresh pages that the kernel zeroed first: a third of a small CNN's epoch was page faults and page
// clearing (perf, 2-core AMD EPYC). While a Scope lives on a thread, the mappings freed on that thread
// are kept and the next allocations of the same size on that thread take them back. It holds up to
// max_bytes, or more where the loop's own peak of live mappings is more (ResNet50 at batch 32 has
// gigabytes of activations, and half of its step was clearing fresh pages with 512 MiB held): what a
// step needed at once, and half as much again for sizes that do not line up, is what it keeps for the
// next, as TensorFlow's allocator keeps its peak; never over half of the machine's memory. Nothing is
// shared between threads; mappings freed outside a scope go back to the system, and so do the cache's
// when it goes (a compiled model keeps one for its train steps).
//
//   auto cache = std::make_shared<MappingCache>(MappingCache::kDefaultBytes);   // a compiled model's
//   {
//     MappingCache::Scope scope(cache);   // fit's epochs, a train_on_batch
//     ... Tensor::empty({128, 26, 26, 32}) ... freed ... Tensor::empty({128, 26, 26, 32})  // the same pages
//   }
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace kerascpp {

class MappingCache {
 public:
  static constexpr size_t kDefaultBytes = size_t{512} << 20;
  // Inside a scope, tensors of this size or more are mappings too (Storage::allocate), so that the
  // medium ones of a step are kept as well; outside one, only Storage::kMapBytes or more.
  static constexpr size_t kScopedBytes = size_t{64} << 10;
  // cap: the most the peak may raise the bound to (0: half of the machine's memory). min_bytes: the
  // smallest tensor made a mapping while this cache is current (kScopedBytes, or Storage::kMapBytes for
  // one that should change nothing below it).
  explicit MappingCache(size_t max_bytes, size_t cap = 0, size_t min_bytes = kScopedBytes)
      : max_bytes_(max_bytes), cap_(cap), min_bytes_(min_bytes) {}
  ~MappingCache();  // unmaps what it holds
  MappingCache(const MappingCache&) = delete;
  MappingCache& operator=(const MappingCache&) = delete;

  // Installs a cache on the calling thread for its lifetime (restoring the one before), keeping it
  // alive meanwhile.
  class Scope {
   public:
    explicit Scope(std::shared_ptr<MappingCache> cache);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    std::shared_ptr<MappingCache> cache_;
    MappingCache* previous_;
  };

  // For Storage: a kept mapping of exactly `bytes` (page-rounded as mapped), or null; and a freed
  // mapping offered back: true when the thread's cache kept it (else the caller unmaps it).
  static void* take(size_t bytes);
  // Whether a scope lives on the calling thread.
  static bool active();
  // The smallest tensor made a mapping on the calling thread now: its cache's min_bytes, or none
  // (SIZE_MAX) without a scope.
  static size_t scoped_min_bytes();
  static bool give(void* data, size_t bytes);
  // For Storage: a mapping of `bytes` handed to a tensor on this thread (taken or new).
  static void allocated(size_t bytes);

  size_t bytes_held() const { return held_; }
  // A new call starts: its live mappings are counted from zero (those of an earlier call that are still
  // alive, such as its outputs, were freed or kept outside any scope and never counted back out).
  void reset_live() { live_ = 0; }
  // What it may hold now: max_bytes, or 1.5x the peak of live mappings when higher (at most the cap,
  // and half the memory).
  size_t bound() const;

 private:
  size_t max_bytes_, cap_, min_bytes_;
  size_t held_ = 0;
  size_t live_ = 0, peak_live_ = 0;  // mappings allocated and not yet freed while this cache was current
  std::multimap<size_t, void*> free_;
};

// Caches for calls that may run at once on one shared model (Functional's interpreted inference): a
// call leases one for its thread (an idle one, else a new one) and gives it back when it returns, so no
// two threads use a cache at once. A cache made here keeps 1.5x the live peak of the biggest call it
// served, at most kHeldBytes: an idle model holds what one call needed, and a model whose calls need
// gigabytes holds no more than that. It takes only tensors that are mappings anyway (Storage::kMapBytes
// or more): smaller ones stay on the heap, where a call's outputs, freed after it, are reused too.
//
//   { MappingCachePool::Lease pages(&pool);  ... the call ... }   // its big tensors: the last call's pages
class MappingCachePool {
 public:
  static constexpr size_t kHeldBytes = size_t{256} << 20;
  class Lease {
   public:
    // No lease (and no scope) where a scope lives on this thread already (a call inside fit, a model
    // inside another model's call): the pages then go to that scope's cache.
    explicit Lease(const MappingCachePool* pool);
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

   private:
    const MappingCachePool* pool_ = nullptr;
    std::shared_ptr<MappingCache> cache_;
    std::optional<MappingCache::Scope> scope_;
  };
  // The bytes the idle caches hold.
  size_t bytes_held() const;

 private:
  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<MappingCache>> idle_;
  mutable size_t made_ = 0;
};

}  // namespace kerascpp
