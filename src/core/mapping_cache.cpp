#include "core/mapping_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "kerascpp/tensor.h"

namespace kerascpp {
namespace {
thread_local MappingCache* current = nullptr;

size_t half_the_memory() {
  static const size_t half = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<size_t>(pages) / 2 * static_cast<size_t>(page) : size_t{0};
  }();
  return half;
}
}  // namespace

// A pool that only hands a mapping back to a tensor of its own size needs more than the live peak
// when a step's sizes do not line up (a gradient asks for a size whose mappings are all still live).
// ResNet50 at batch 32 (2-core AMD EPYC): the live peak 7.67 GB, and 35 mappings (0.59 GB) a step
// were refused and mapped afresh at 1x the peak; at 1.5x none, and a train step took 5.5 s instead
// of 6.0-6.2 s. The bound still stops a loop whose shapes keep changing from keeping every size.
size_t MappingCache::bound() const {
  const size_t cap = cap_ > 0 ? std::min(cap_, half_the_memory()) : half_the_memory();
  return std::max(max_bytes_, std::min(peak_live_ + peak_live_ / 2, cap));
}

void MappingCache::allocated(size_t bytes) {
  if (MappingCache* c = current) {
    c->live_ += bytes;
    c->peak_live_ = std::max(c->peak_live_, c->live_);
  }
}

MappingCache::~MappingCache() {
  for (const auto& [bytes, data] : free_) munmap(data, bytes);
}

MappingCache::Scope::Scope(std::shared_ptr<MappingCache> cache) : cache_(std::move(cache)), previous_(current) {
  current = cache_.get();
}
MappingCache::Scope::~Scope() { current = previous_; }

bool MappingCache::active() { return current != nullptr; }

size_t MappingCache::scoped_min_bytes() { return current ? current->min_bytes_ : SIZE_MAX; }

void* MappingCache::take(size_t bytes) {
  MappingCache* c = current;
  if (c == nullptr) return nullptr;
  auto it = c->free_.find(bytes);
  if (it == c->free_.end()) return nullptr;
  void* data = it->second;
  c->free_.erase(it);
  c->held_ -= bytes;
  return data;
}

bool MappingCache::give(void* data, size_t bytes) {
  MappingCache* c = current;
  if (c == nullptr) return false;
  c->live_ -= std::min(c->live_, bytes);  // one allocated before the scope was not counted in
  if (c->held_ + bytes > c->bound()) return false;
  try {
    c->free_.emplace(bytes, data);
  } catch (...) {  // no memory for the node: unmapped instead (a destructor must not throw)
    return false;
  }
  c->held_ += bytes;
  return true;
}

MappingCachePool::Lease::Lease(const MappingCachePool* pool) {
  if (MappingCache::active()) return;
  {
    std::lock_guard<std::mutex> lock(pool->mutex_);
    if (!pool->idle_.empty()) {
      cache_ = std::move(pool->idle_.back());
      pool->idle_.pop_back();
    } else {
      pool->idle_.reserve(++pool->made_);  // so that giving it back (in a destructor) never allocates
    }
  }
  if (!cache_) cache_ = std::make_shared<MappingCache>(0, kHeldBytes, Storage::kMapBytes);
  cache_->reset_live();
  pool_ = pool;
  scope_.emplace(cache_);
}

MappingCachePool::Lease::~Lease() {
  if (!pool_) return;
  scope_.reset();
  std::lock_guard<std::mutex> lock(pool_->mutex_);
  pool_->idle_.push_back(std::move(cache_));
}

size_t MappingCachePool::bytes_held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t bytes = 0;
  for (const auto& c : idle_) bytes += c->bytes_held();
  return bytes;
}

}  // namespace kerascpp
