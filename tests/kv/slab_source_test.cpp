#include "kv/slab_source.hpp"

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "kv/size_class_pool.hpp"

namespace strata::kv {
namespace {

constexpr std::size_t kSlab = SizeClassPool::kHugeSlab;

// Waits (yielding, not sleeping) until the helper has made `n` slabs in all.
void wait_until_made(const SlabSource& source, std::size_t n) {
  while (source.made() < n) std::this_thread::yield();
}

TEST(SlabSource, HandsOutAlignedWritableSlabsAndKeepsOnlyAFewReady) {
  SlabSource source(3);
  wait_until_made(source, 3);
  std::vector<void*> slabs;
  for (int i = 0; i < 3; ++i) {
    void* slab = source.take();
    ASSERT_NE(slab, nullptr) << "three were made and none taken yet";
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(slab) % kSlab, 0U);
    std::memset(slab, 0xab, kSlab);
    slabs.push_back(slab);
  }
  EXPECT_EQ(source.taken(), 3U);
  // Taking made room: the helper makes more, but never more than 3 ahead.
  wait_until_made(source, 6);
  EXPECT_EQ(source.made(), 6U);
  EXPECT_EQ(std::set<void*>(slabs.begin(), slabs.end()).size(), 3U);
  for (void* slab : slabs) std::free(slab);
  // The three ready slabs are freed by the destructor (LeakSanitizer checks it).
}

// A source asked to keep nothing ready never has a slab: take() must say so at once (a
// take() that waited for the helper would hang here), and the pool then allocates its own.
TEST(SlabSource, TakeFromASourceWithNothingReadyReturnsNullAtOnce) {
  SlabSource source(0);
  EXPECT_EQ(source.take(), nullptr);
  EXPECT_EQ(source.take(), nullptr);
  EXPECT_EQ(source.made(), 0U);
  EXPECT_EQ(source.taken(), 0U);
  SizeClassPool pool;
  pool.set_slab_source(&source);
  std::vector<void*> blocks;
  while (pool.slab_bytes() < 3 * kSlab) blocks.push_back(pool.allocate(120));
  EXPECT_EQ(source.taken(), 0U);
  for (void* p : blocks) pool.deallocate(p, 120);
}

TEST(SlabSource, APoolTakesItsHugeSlabsFromTheSourceWhileItHasThem) {
  SlabSource source(4);
  wait_until_made(source, 4);
  SizeClassPool pool;
  pool.set_slab_source(&source);
  // Enough 120-byte blocks to need several huge slabs past the small first ones.
  std::vector<unsigned char*> blocks;
  while (pool.slab_bytes() < 12 * kSlab) {
    auto* p = static_cast<unsigned char*>(pool.allocate(120));
    std::memset(p, static_cast<int>(blocks.size() & 0xff), 120);
    blocks.push_back(p);
  }
  EXPECT_GE(source.taken(), 4U) << "the four ready slabs went to the pool";
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    ASSERT_EQ(blocks[i][0], static_cast<unsigned char>(i & 0xff)) << i;
    ASSERT_EQ(blocks[i][119], static_cast<unsigned char>(i & 0xff)) << i;
  }
  pool.set_slab_source(nullptr);
  // Without the source the pool goes on allocating for itself.
  const std::size_t taken = source.taken();
  const std::size_t bytes = pool.slab_bytes();
  while (pool.slab_bytes() == bytes)
    blocks.push_back(static_cast<unsigned char*>(pool.allocate(120)));
  EXPECT_EQ(source.taken(), taken);
  for (unsigned char* p : blocks) pool.deallocate(p, 120);
}

}  // namespace
}  // namespace strata::kv
