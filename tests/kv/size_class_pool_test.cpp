#include "kv/size_class_pool.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace strata::kv {
namespace {

struct Block {
  unsigned char* p;
  std::size_t size;
  unsigned char fill;
};

TEST(SizeClassPool, BlocksAreAlignedDisjointAndKeepTheirBytes) {
  SizeClassPool pool;
  std::mt19937_64 rng(11);
  std::vector<Block> live;
  for (int step = 0; step < 20000; ++step) {
    if (!live.empty() && rng() % 3 == 0) {
      std::size_t i = rng() % live.size();
      Block b = live[i];
      for (std::size_t j = 0; j < b.size; ++j) ASSERT_EQ(b.p[j], b.fill) << "size " << b.size;
      pool.deallocate(b.p, b.size);
      live[i] = live.back();
      live.pop_back();
    } else {
      // Mostly pooled sizes, some above kMaxPooled.
      std::size_t size = 1 + rng() % (SizeClassPool::kMaxPooled + 200);
      auto* p = static_cast<unsigned char*>(pool.allocate(size));
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % 8, 0u);
      auto fill = static_cast<unsigned char>(rng());
      std::memset(p, fill, size);
      live.push_back({p, size, fill});
    }
  }
  // No two live blocks overlap.
  std::sort(live.begin(), live.end(), [](const Block& a, const Block& b) { return a.p < b.p; });
  for (std::size_t i = 1; i < live.size(); ++i) {
    EXPECT_LE(live[i - 1].p + live[i - 1].size, live[i].p);
  }
  for (const Block& b : live) pool.deallocate(b.p, b.size);
}

TEST(SizeClassPool, AFreedBlockServesTheNextRequestOfItsSize) {
  SizeClassPool pool;
  void* a = pool.allocate(40);
  void* b = pool.allocate(120);
  pool.deallocate(a, 40);
  EXPECT_EQ(pool.allocate(37), a);  // 37 rounds to the same 40-byte class
  pool.deallocate(b, 120);
  EXPECT_NE(pool.allocate(48), b);  // a different class does not take it
  EXPECT_EQ(pool.allocate(120), b);
}

TEST(SizeClassPool, BlocksPackWithoutPerBlockOverhead) {
  SizeClassPool pool;
  auto* first = static_cast<char*>(pool.allocate(40));
  auto* second = static_cast<char*>(pool.allocate(40));
  EXPECT_EQ(second - first, 40);
  EXPECT_EQ(pool.slab_bytes(), SizeClassPool::kFirstSlab);
}

TEST(SizeClassPool, ChurnAtAConstantLiveSetTakesNoNewSlabs) {
  SizeClassPool pool;
  std::vector<void*> live;
  for (int i = 0; i < 10000; ++i) live.push_back(pool.allocate(48 + 8 * (i % 4)));
  std::size_t after_fill = pool.slab_bytes();
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 10000; ++i) {
      pool.deallocate(live[i], 48 + 8 * (i % 4));
      live[i] = pool.allocate(48 + 8 * (i % 4));
    }
  }
  EXPECT_EQ(pool.slab_bytes(), after_fill);
  for (int i = 0; i < 10000; ++i) pool.deallocate(live[i], 48 + 8 * (i % 4));
}

TEST(SizeClassPool, AllocateAfterExtendsTheNewestCarvedBlock) {
  SizeClassPool pool;
  auto* node = static_cast<char*>(pool.allocate(37));  // a 40-byte block
  EXPECT_EQ(pool.allocate_after(node, 37, 120), node + 40);
  auto* next = static_cast<char*>(pool.allocate(40));
  EXPECT_EQ(next, node + 160);  // carving goes on behind both
}

TEST(SizeClassPool, AllocateAfterRefusesWhenTheBlockIsNotTheNewestCarve) {
  SizeClassPool pool;
  SizeClassPool other;
  void* a = pool.allocate(40);
  void* b = pool.allocate(40);
  EXPECT_EQ(pool.allocate_after(a, 40, 120), nullptr);   // b was carved after it
  EXPECT_EQ(other.allocate_after(b, 40, 120), nullptr);  // another pool's block
  EXPECT_EQ(pool.allocate_after(b, 40, SizeClassPool::kMaxPooled + 1), nullptr);
  pool.deallocate(a, 40);
  void* reused = pool.allocate(40);
  ASSERT_EQ(reused, a);
  EXPECT_EQ(pool.allocate_after(reused, 40, 120), nullptr);  // from the free list
  // No room left in the slab: no block, rather than one in a new slab.
  SizeClassPool full;
  void* last = nullptr;
  for (std::size_t used = 0; used < SizeClassPool::kFirstSlab; used += 1024) {
    last = full.allocate(1024);
  }
  EXPECT_EQ(full.allocate_after(last, 1024, 8), nullptr);
}

TEST(SizeClassPool, ABlockTakenAfterAnotherIsFreedIntoEitherPool) {
  SizeClassPool nodes;
  SizeClassPool records;  // destroyed first: it never touches its free blocks' memory
  void* node = nodes.allocate(40);
  void* record = nodes.allocate_after(node, 40, 120);
  ASSERT_NE(record, nullptr);
  std::memset(record, 0x5a, 120);
  records.deallocate(record, 120);
  EXPECT_EQ(records.allocate(120), record);
  records.deallocate(record, 120);
  nodes.deallocate(node, 40);
}

// What lets an owner leave its blocks to the slabs (MvccStore's destructor): the count of
// blocks above kMaxPooled, which the owner adds up over its pools.
TEST(SizeClassPool, BlocksAboveTheLargestClassAreCountedWhereverTheyAreFreed) {
  SizeClassPool nodes;
  SizeClassPool records;
  void* pooled = nodes.allocate(SizeClassPool::kMaxPooled);
  EXPECT_EQ(nodes.large_blocks(), 0);
  void* a = nodes.allocate(SizeClassPool::kMaxPooled + 1);
  void* b = nodes.allocate(4 * SizeClassPool::kMaxPooled);
  EXPECT_EQ(nodes.large_blocks(), 2);
  nodes.deallocate(a, SizeClassPool::kMaxPooled + 1);
  EXPECT_EQ(nodes.large_blocks(), 1);
  records.deallocate(b, 4 * SizeClassPool::kMaxPooled);  // given back through the other pool
  EXPECT_EQ(nodes.large_blocks() + records.large_blocks(), 0);
  nodes.reserve_large(2 * SizeClassPool::kMaxPooled);  // reserved, not handed out
  EXPECT_EQ(nodes.large_blocks(), 1);
  void* c = nodes.allocate(2 * SizeClassPool::kMaxPooled);
  EXPECT_EQ(nodes.large_blocks(), 2);
  nodes.deallocate(c, 2 * SizeClassPool::kMaxPooled);
  nodes.deallocate(pooled, SizeClassPool::kMaxPooled);
  EXPECT_EQ(nodes.large_blocks() + records.large_blocks(), 0);
}

#if defined(__SANITIZE_ADDRESS__)
TEST(SizeClassPoolDeathTest, UseAfterFreeIsReportedUnderAddressSanitizer) {
  SizeClassPool pool;
  auto* p = static_cast<volatile char*>(pool.allocate(64));
  pool.deallocate(const_cast<char*>(p), 64);
  EXPECT_DEATH(p[16] = 1, "use-after-poison");
}
#endif

}  // namespace
}  // namespace strata::kv
