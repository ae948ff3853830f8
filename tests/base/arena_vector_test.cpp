// base::ArenaVector: growth keeps the elements in order, erase closes the gap, the room
// comes from the arena, and forget() leaves an empty array that works again after the
// arena's release.
#include "base/arena_vector.hpp"

#include <array>
#include <cstddef>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

namespace strata::base {
namespace {

TEST(ArenaVector, GrowsInOrderInsideTheArena) {
  std::array<std::byte, 4096> buffer{};
  Arena arena(buffer.data(), buffer.size());
  ArenaVector<int> v(&arena);
  for (int i = 0; i < 100; ++i) v.push_back(i);
  ASSERT_EQ(v.size(), 100u);
  std::vector<int> want(100);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(std::vector<int>(v.begin(), v.end()), want);
  const auto* p = reinterpret_cast<const std::byte*>(v.begin());
  EXPECT_GE(p, buffer.data());
  EXPECT_LE(p + 100 * sizeof(int), buffer.data() + buffer.size());
}

// The first two elements live in the array itself: a transaction's one read range or key
// takes nothing from the arena. The third moves them all into the arena, in order.
TEST(ArenaVector, FirstElementsTakeNoArenaRoom) {
  std::array<std::byte, 256> buffer{};
  Arena arena(buffer.data(), buffer.size());
  ArenaVector<int> v(&arena);
  for (int round = 0; round < 2; ++round) {
    v.push_back(1);
    v.push_back(2);
    EXPECT_EQ(arena.bump(1, 1), buffer.data());  // nothing was taken before
    v.push_back(3);
    EXPECT_EQ(std::vector<int>(v.begin(), v.end()), (std::vector<int>{1, 2, 3}));
    const auto* p = reinterpret_cast<const std::byte*>(v.begin());
    EXPECT_GT(p, buffer.data());  // in the arena, after the byte taken above
    EXPECT_LT(p, buffer.data() + buffer.size());
    v.forget();
    arena.release();
    EXPECT_TRUE(v.empty());
  }
}

TEST(ArenaVector, EraseMovesTheTailDown) {
  Arena arena(nullptr, 0);
  ArenaVector<int> v(&arena);
  for (int i = 0; i < 10; ++i) v.push_back(i);
  v.erase(v.begin() + 2, v.begin() + 5);
  EXPECT_EQ(std::vector<int>(v.begin(), v.end()), (std::vector<int>{0, 1, 5, 6, 7, 8, 9}));
  EXPECT_EQ(v.back(), 9);
  v.erase(v.begin(), v.end());
  EXPECT_TRUE(v.empty());
}

TEST(ArenaVector, ForgetThenReleaseThenUseAgain) {
  Arena arena(nullptr, 0);
  ArenaVector<long> v(&arena);
  for (long i = 0; i < 1000; ++i) v.push_back(i);
  v.forget();
  arena.release();  // the old room is gone; the array must not touch it
  EXPECT_TRUE(v.empty());
  for (long i = 0; i < 5; ++i) v.push_back(i * 2);
  EXPECT_EQ(std::vector<long>(v.begin(), v.end()), (std::vector<long>{0, 2, 4, 6, 8}));
}

}  // namespace
}  // namespace strata::base
