// The item keys of the Queue and PriorityQueue recipes: built without a Tuple, they must be
// byte for byte what Subspace::pack((position, Bytes{20 random bytes})) gives.
#include "recipes/random_id.hpp"

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/subspace.hpp"
#include "strata/tuple.hpp"

#include "support/error_matchers.hpp"

namespace strata::recipes_detail {
namespace {

using strata::testing::ThrowsCode;

TEST(NumberedItemKey, IsThePackedTupleOfPositionAndId) {
  const Subspace subspace(Tuple{"queue", std::int64_t{7}});
  for (std::int64_t position :
       {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{255}, std::int64_t{256},
        std::int64_t{1} << 40, std::numeric_limits<std::int64_t>::max(),
        std::numeric_limits<std::int64_t>::min()}) {
    const std::string key(numbered_item_key(subspace, position));
    ASSERT_TRUE(subspace.contains(key)) << position;
    const Tuple item = subspace.unpack(key);
    ASSERT_EQ(item.size(), 2u) << position;
    EXPECT_EQ(item[0].get<std::int64_t>(), position);
    ASSERT_TRUE(item[1].is<Bytes>());
    EXPECT_EQ(item[1].get<Bytes>().data.size(), kRandomIdSize);
    // The same bytes as packing the decoded tuple (zero bytes in the id escaped alike).
    EXPECT_EQ(subspace.pack(item), key) << position;
    EXPECT_EQ(item_position(subspace, key), position);
  }
}

// An id with a 00 byte (about one in 13) has each 00 written 00 FF; the others are copied
// whole. Over many keys both kinds occur, and each key is what packing its tuple gives, as
// FoundationDB's tuple layer encodes a byte string
// (https://github.com/apple/foundationdb/blob/main/design/tuple.md).
TEST(NumberedItemKey, IdsWithAndWithoutZeroBytesPackAsTheirTuple) {
  const Subspace subspace(Tuple{"q"});
  int with_zero = 0;
  int without_zero = 0;
  for (std::int64_t position = 0; position < 2000; ++position) {
    const std::string key(numbered_item_key(subspace, position));
    const Tuple item = subspace.unpack(key);
    ASSERT_EQ(item.size(), 2u);
    const std::string& id = item[1].get<Bytes>().data;
    ASSERT_EQ(id.size(), kRandomIdSize);
    ASSERT_EQ(subspace.pack(Tuple{position, Bytes{id}}), key);
    ++(id.find('\0') == std::string::npos ? without_zero : with_zero);
  }
  EXPECT_GT(with_zero, 0);
  EXPECT_GT(without_zero, 0);
}

// The thread's buffer keeps the room of its longest key: a shorter key after a longer one
// is exactly its own bytes, none of the longer key's left behind.
TEST(NumberedItemKey, AShortKeyAfterALongOneIsExact) {
  const Subspace long_prefix(Tuple{std::string(5000, 'p')});
  const Subspace short_prefix(Tuple{"q"});
  for (int i = 0; i < 3; ++i) {
    const std::string long_key(numbered_item_key(long_prefix, std::int64_t{1} << 40));
    const std::string short_key(numbered_item_key(short_prefix, 3));
    EXPECT_EQ(long_prefix.pack(long_prefix.unpack(long_key)), long_key);
    EXPECT_EQ(short_prefix.pack(short_prefix.unpack(short_key)), short_key);
    EXPECT_LE(short_key.size(), short_prefix.key().size() + 2 + 2 + 2 * kRandomIdSize);
  }
}

// The key built after a prefix already in the caller's buffer (a priority queue's level):
// the prefix's bytes stay, the rest is the packed (position, id), whatever the buffer held
// beyond the prefix or however short it was.
TEST(NumberedItemKey, BuiltAfterAPrefixInTheCallersBuffer) {
  const Subspace level(Tuple{"pq", std::int64_t{42}});
  for (const std::string& before :
       {level.key(), level.key() + std::string(1, '\0'), level.key() + std::string(300, '\xff')}) {
    for (std::int64_t position : {std::int64_t{0}, std::int64_t{-5}, std::int64_t{1} << 50}) {
      std::string buffer = before;
      const std::string key(numbered_item_key_after(buffer, level.key().size(), position));
      ASSERT_TRUE(key.starts_with(level.key()));
      const Tuple item = level.unpack(key);
      ASSERT_EQ(item.size(), 2u);
      EXPECT_EQ(item[0].get<std::int64_t>(), position);
      EXPECT_EQ(item[1].get<Bytes>().data.size(), kRandomIdSize);
      EXPECT_EQ(level.pack(item), key);
    }
  }
}

// item_position refuses what subspace.unpack(key)[0].get<std::int64_t>() refuses.
TEST(ItemPosition, RefusesWhatUnpackRefuses) {
  const Subspace subspace(Tuple{"q"});
  const Subspace other(Tuple{"r"});
  EXPECT_THAT([&] { (void)item_position(subspace, numbered_item_key(other, 1)); },
              ThrowsCode(ErrorCode::key_not_in_subspace));
  EXPECT_THAT([&] { (void)item_position(subspace, subspace.key()); },
              ThrowsCode(ErrorCode::invalid_tuple));
  EXPECT_THAT([&] { (void)item_position(subspace, subspace.key() + "\xff"); },
              ThrowsCode(ErrorCode::invalid_tuple));
  EXPECT_THAT(
      [&] {
        (void)item_position(subspace, subspace.pack(Tuple{"text", 1}));
      },
      ThrowsCode(ErrorCode::invalid_argument));
}

TEST(NumberedItemKey, IdsDifferAndKeysOrderByPosition) {
  const Subspace subspace(Tuple{"q"});
  std::set<std::string> keys;
  for (int i = 0; i < 1000; ++i) keys.emplace(numbered_item_key(subspace, 5));
  EXPECT_EQ(keys.size(), 1000u) << "random ids collided";
  EXPECT_LT(*keys.rbegin(), numbered_item_key(subspace, 6));
  EXPECT_GT(*keys.begin(), numbered_item_key(subspace, 4));
}

// The key is built in a buffer of the calling thread's: threads building keys at the same
// time each get their own key back intact.
TEST(NumberedItemKey, ThreadsBuildTheirOwnKeys) {
  constexpr int kThreads = 4;
  constexpr int kKeys = 2000;
  const Subspace subspace(Tuple{"q"});
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeys; ++i) {
        const std::int64_t position = std::int64_t{t} * kKeys + i;
        const std::string key(numbered_item_key(subspace, position));
        if (item_position(subspace, key) != position) ++wrong[static_cast<std::size_t>(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[static_cast<std::size_t>(t)], 0) << t;
}

// Each thread seeds its own generator: threads started together draw different ids.
TEST(RandomId, ThreadsDrawDifferentIds) {
  constexpr int kThreads = 8;
  constexpr int kIds = 1000;
  std::vector<std::vector<std::string>> drawn(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&drawn, t] {
      for (int i = 0; i < kIds; ++i) drawn[static_cast<std::size_t>(t)].push_back(random_id().data);
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::string> all;
  for (const auto& ids : drawn) all.insert(ids.begin(), ids.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kThreads * kIds));
  for (const std::string& id : all) EXPECT_EQ(id.size(), kRandomIdSize);
}

}  // namespace
}  // namespace strata::recipes_detail
