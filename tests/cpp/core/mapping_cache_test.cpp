// MappingCache: while a scope lives on a thread, big tensors freed there give their mapping to the
// next tensor of that size (a training loop's activations), zeroed when asked; bounded; nothing kept
// outside a scope or after it.
#include "core/mapping_cache.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "kerascpp/tensor.h"

namespace kerascpp {
namespace {

const Shape kBig = {1 << 19};  // 2 MiB of float32: a mapping of its own

TEST(MappingCache, ReusesAFreedMappingOfTheSameSizeInsideAScope) {
  auto shared = std::make_shared<MappingCache>(MappingCache::kDefaultBytes);
  MappingCache& cache = *shared;
  const void* first = nullptr;
  {
    MappingCache::Scope scope(shared);
    {
      Tensor a = Tensor::empty(kBig);
      a.data<float>()[7] = 3.f;
      first = a.raw_data();
    }
    EXPECT_EQ(cache.bytes_held(), size_t{2} << 20);
    Tensor b = Tensor::empty(kBig);
    EXPECT_EQ(b.raw_data(), first);  // the same pages, not fresh ones
    EXPECT_EQ(cache.bytes_held(), 0u);
    b = Tensor();
    Tensor z = Tensor::zeros(kBig);  // reused memory is zeroed when zeros are asked for
    EXPECT_EQ(z.raw_data(), first);
    EXPECT_EQ(z.data<float>()[7], 0.f);
    Tensor other = Tensor::empty({(1 << 19) + 4096});  // another size: a mapping of its own
    EXPECT_NE(other.raw_data(), first);
  }
  EXPECT_GT(cache.bytes_held(), 0u);  // held until the cache goes (z and other were freed in the scope)
}

TEST(MappingCache, KeepsNothingOutsideAScopeOrBeyondItsBound) {
  auto small_cache = std::make_shared<MappingCache>(size_t{3} << 20);  // 3 MiB, above the live peak
  const MappingCache& small = *small_cache;
  {
    MappingCache::Scope scope(small_cache);
    Tensor a = Tensor::empty(kBig), tiny = Tensor::empty({16});
    a = Tensor();  // held: 2 MiB
    tiny = Tensor();  // malloc's, never the cache's
    Tensor c = Tensor::empty({3 << 17});  // 1.5 MiB, another size: a mapping of its own
    c = Tensor();  // 3.5 MiB would pass the bound (3 MiB, over the 2 MiB live at most): unmapped
    EXPECT_EQ(small.bytes_held(), size_t{2} << 20);
  }
  auto shared = std::make_shared<MappingCache>(MappingCache::kDefaultBytes);
  const MappingCache& cache = *shared;
  Tensor kept;
  {
    MappingCache::Scope scope(shared);
    kept = Tensor::empty(kBig);
    std::thread([&] { Tensor t = Tensor::empty(kBig); }).join();  // another thread: not this scope's
    EXPECT_EQ(cache.bytes_held(), 0u);
  }
  kept = Tensor();  // freed after the scope: unmapped
  EXPECT_EQ(cache.bytes_held(), 0u);
}

TEST(MappingCache, HoldsUpToTheLoopsOwnPeakOfLiveMappings) {
  auto cache = std::make_shared<MappingCache>(size_t{3} << 20);  // 3 MiB, below the peak below
  MappingCache::Scope scope(cache);
  {
    std::vector<Tensor> step;  // 4 x 2 MiB live at once: the step's peak
    for (int i = 0; i < 4; ++i) step.push_back(Tensor::empty(kBig));
    EXPECT_EQ(cache->bound(), size_t{12} << 20);  // 1.5x the peak
  }
  EXPECT_EQ(cache->bytes_held(), size_t{8} << 20);  // all kept for the next step, none refused
  std::vector<Tensor> next;
  for (int i = 0; i < 4; ++i) next.push_back(Tensor::empty(kBig));
  EXPECT_EQ(cache->bytes_held(), 0u);  // every one taken back
}

// Inside a scope a medium tensor (64 KiB to 1 MiB) is kept and reused too; outside one it is the
// heap's, and no cache sees it.
TEST(MappingCache, KeepsMediumTensorsOnlyInsideAScope) {
  const Shape medium = {1 << 16};  // 256 KiB
  auto cache = std::make_shared<MappingCache>(MappingCache::kDefaultBytes);
  {
    MappingCache::Scope scope(cache);
    EXPECT_TRUE(MappingCache::active());
    const void* first = nullptr;
    {
      Tensor a = Tensor::empty(medium);
      first = a.raw_data();
    }
    EXPECT_EQ(cache->bytes_held(), size_t{256} << 10);
    Tensor b = Tensor::empty(medium);
    EXPECT_EQ(b.raw_data(), first);
    b = Tensor();
    Tensor z = Tensor::zeros(medium);  // zeroed when taken back
    EXPECT_EQ(z.raw_data(), first);
    EXPECT_EQ(z.data<float>()[100], 0.f);
    Tensor small = Tensor::empty({1 << 10});  // 4 KiB: the heap's
    small = Tensor();
    EXPECT_EQ(cache->bytes_held(), 0u);
  }
  EXPECT_FALSE(MappingCache::active());
  // Made outside a scope, a medium tensor is the heap's: freed inside one, no cache takes it (a
  // mapping would be kept).
  const size_t held = cache->bytes_held();
  Tensor outside = Tensor::empty(medium), big_outside = Tensor::empty({1 << 19});
  {
    MappingCache::Scope scope(cache);
    outside = Tensor();
    EXPECT_EQ(cache->bytes_held(), held);
    big_outside = Tensor();  // 2 MiB: a mapping wherever it was made, kept
    EXPECT_EQ(cache->bytes_held(), held + (size_t{2} << 20));
  }
}

// A step whose later tensor has a size none of the freed mappings has: that mapping is new, the pool
// then holds more than the live peak, and the next step still finds every size it asks for.
TEST(MappingCache, KeepsAStepWhoseSizesDoNotLineUp) {
  auto cache = std::make_shared<MappingCache>(size_t{1} << 20);
  MappingCache::Scope scope(cache);
  const Shape odd = {(1 << 18) + (1 << 17)};  // 1.5 MiB
  auto step = [&] {
    {
      Tensor a = Tensor::empty(kBig), b = Tensor::empty(kBig);  // the live peak: 4 MiB
    }
    Tensor c = Tensor::empty(odd);  // no 1.5 MiB mapping free
  };
  step();
  EXPECT_EQ(cache->bytes_held(), (size_t{11} << 19));  // 2 + 2 + 1.5 MiB: over the peak, all kept
  step();
  EXPECT_EQ(cache->bytes_held(), (size_t{11} << 19));  // the second step mapped nothing new
}

}  // namespace
}  // namespace kerascpp
