#include "core/mapping_cache.h"

#include <sys/mman.h>

namespace kerascpp {
namespace {
thread_local MappingCache* current = nullptr;
}

MappingCache::~MappingCache() {
  for (const auto& [bytes, data] : free_) munmap(data, bytes);
}

MappingCache::Scope::Scope(std::shared_ptr<MappingCache> cache) : cache_(std::move(cache)), previous_(current) {
  current = cache_.get();
}
MappingCache::Scope::~Scope() { current = previous_; }

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
  if (c == nullptr || c->held_ + bytes > c->max_bytes_) return false;
  try {
    c->free_.emplace(bytes, data);
  } catch (...) {  // no memory for the node: unmapped instead (a destructor must not throw)
    return false;
  }
  c->held_ += bytes;
  return true;
}

}  // namespace kerascpp
