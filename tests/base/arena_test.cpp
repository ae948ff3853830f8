// base::Arena: aligned, non-overlapping allocations from the inline buffer, then from heap
// blocks; release() rewinds to the inline buffer. ASan sees every heap block.
#include "base/arena.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory_resource>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace strata::base {
namespace {

bool inside(const void* p, const std::array<std::byte, 256>& buffer) {
  const auto* b = static_cast<const std::byte*>(p);
  return b >= buffer.data() && b < buffer.data() + buffer.size();
}

TEST(Arena, AllocationsAreAlignedAndDisjointAcrossBlocks) {
  std::array<std::byte, 256> buffer{};
  Arena arena(buffer.data(), buffer.size());
  struct Piece {
    unsigned char* p;
    std::size_t size;
  };
  std::vector<Piece> pieces;
  // Sizes and alignments that leave odd offsets, spill past the inline buffer, and ask for
  // more than one block holds.
  const std::size_t sizes[] = {1, 7, 24, 3, 100, 1000, 5, 70000, 16, 9};
  const std::size_t aligns[] = {1, 2, 4, 8, 16, 32, 64};
  for (int round = 0; round < 20; ++round) {
    for (std::size_t i = 0; i < std::size(sizes); ++i) {
      const std::size_t align = aligns[(i + round) % std::size(aligns)];
      auto* p = static_cast<unsigned char*>(arena.allocate(sizes[i], align));
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u);
      std::memset(p, round * 16 + static_cast<int>(i), sizes[i]);  // ASan: within a block
      pieces.push_back({p, sizes[i]});
    }
  }
  // Every piece still holds its own fill: nothing overlapped.
  std::size_t n = 0;
  for (int round = 0; round < 20; ++round) {
    for (std::size_t i = 0; i < std::size(sizes); ++i, ++n) {
      const auto expected = static_cast<unsigned char>(round * 16 + static_cast<int>(i));
      for (std::size_t k = 0; k < pieces[n].size; ++k) {
        ASSERT_EQ(pieces[n].p[k], expected) << "piece " << n << " byte " << k;
      }
    }
  }
  EXPECT_TRUE(inside(pieces.front().p, buffer));
  EXPECT_FALSE(inside(pieces.back().p, buffer));
}

// copy() copies keys of 8 to 64 bytes in overlapping chunks and others with memcpy: every
// size around the chunks' edges comes out whole, next to the copies made before it.
TEST(Arena, CopiesBytesOfEverySizeWhole) {
  std::array<std::byte, 256> buffer{};
  Arena arena(buffer.data(), buffer.size());
  std::string source;
  for (int i = 0; i < 100; ++i) source.push_back(static_cast<char>('a' + i % 26 + (i / 26)));
  std::vector<std::string_view> copies;
  for (std::size_t n = 0; n <= source.size(); ++n) {
    copies.push_back(arena.copy(std::string_view(source).substr(source.size() - n)));
  }
  for (std::size_t n = 0; n < copies.size(); ++n) {
    EXPECT_EQ(copies[n], std::string_view(source).substr(source.size() - n)) << n << " bytes";
  }
}

TEST(Arena, ReleaseRewindsToTheInlineBuffer) {
  std::array<std::byte, 256> buffer{};
  Arena arena(buffer.data(), buffer.size());
  void* first = arena.allocate(16, 8);
  EXPECT_TRUE(inside(first, buffer));
  for (int i = 0; i < 100; ++i) (void)arena.allocate(512, 8);  // heap blocks
  arena.release();
  EXPECT_EQ(arena.allocate(16, 8), first);
}

// Whether release() follows an arena that stayed in its inline buffer or one that spilled
// to heap blocks, the whole inline buffer serves again, and then the heap.
TEST(Arena, EveryReleaseLeavesTheWholeInlineBufferThenTheHeap) {
  std::array<std::byte, 256> buffer{};
  Arena arena(buffer.data(), buffer.size());
  for (const std::size_t spill : {0, 0, 5000, 0, 100000, 0}) {
    (void)arena.allocate(200, 1);
    if (spill != 0) {
      EXPECT_FALSE(inside(arena.allocate(spill, 8), buffer));
    }
    arena.release();
    void* all = arena.allocate(buffer.size(), 1);
    EXPECT_EQ(all, buffer.data());
    void* next = arena.allocate(1, 1);
    EXPECT_FALSE(inside(next, buffer));
    std::memset(next, 1, 1);  // ASan: inside a heap block
    arena.release();
  }
}

// A size no block can hold is refused, not wrapped around into a small block.
TEST(Arena, RefusesAnImpossibleSize) {
  std::array<std::byte, 256> buffer{};
  Arena arena(buffer.data(), buffer.size());
  EXPECT_THROW((void)arena.allocate(SIZE_MAX - 8, 8), std::bad_alloc);
  EXPECT_THROW((void)arena.allocate(SIZE_MAX / 2, 8), std::bad_alloc);
  (void)arena.allocate(1, 1);  // the next 8-aligned piece needs padding
  EXPECT_THROW((void)arena.allocate(SIZE_MAX - 2, 8), std::bad_alloc);
  EXPECT_TRUE(inside(arena.allocate(16, 8), buffer));  // still usable
}

TEST(Arena, BacksPmrContainers) {
  std::array<std::byte, 256> buffer{};
  Arena arena(buffer.data(), buffer.size());
  std::pmr::map<std::pmr::string, std::pmr::string> map(&arena);
  for (int i = 0; i < 1000; ++i) {
    map.emplace(std::pmr::string("a key long enough for the heap " + std::to_string(i), &arena),
                std::pmr::string(std::string(i % 200, 'v'), &arena));
  }
  ASSERT_EQ(map.size(), 1000u);
  EXPECT_EQ(map.at(std::pmr::string("a key long enough for the heap 999", &arena)).size(),
            999u % 200);
  EXPECT_TRUE(arena.is_equal(arena));
  std::pmr::monotonic_buffer_resource other;
  EXPECT_FALSE(arena.is_equal(other));
}

}  // namespace
}  // namespace strata::base
