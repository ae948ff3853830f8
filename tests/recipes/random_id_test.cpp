// The item keys of the Queue and PriorityQueue recipes: built without a Tuple, they must be
// byte for byte what Subspace::pack((position, Bytes{20 random bytes})) gives.
#include "recipes/random_id.hpp"

#include <cstdint>
#include <limits>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "strata/subspace.hpp"
#include "strata/tuple.hpp"

namespace strata::recipes_detail {
namespace {

TEST(NumberedItemKey, IsThePackedTupleOfPositionAndId) {
  const Subspace subspace(Tuple{"queue", std::int64_t{7}});
  for (std::int64_t position :
       {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{255}, std::int64_t{256},
        std::int64_t{1} << 40, std::numeric_limits<std::int64_t>::max(),
        std::numeric_limits<std::int64_t>::min()}) {
    const std::string key = numbered_item_key(subspace, position);
    ASSERT_TRUE(subspace.contains(key)) << position;
    const Tuple item = subspace.unpack(key);
    ASSERT_EQ(item.size(), 2u) << position;
    EXPECT_EQ(item[0].get<std::int64_t>(), position);
    ASSERT_TRUE(item[1].is<Bytes>());
    EXPECT_EQ(item[1].get<Bytes>().data.size(), kRandomIdSize);
    // The same bytes as packing the decoded tuple (zero bytes in the id escaped alike).
    EXPECT_EQ(subspace.pack(item), key) << position;
  }
}

TEST(NumberedItemKey, IdsDifferAndKeysOrderByPosition) {
  const Subspace subspace(Tuple{"q"});
  std::set<std::string> keys;
  for (int i = 0; i < 1000; ++i) keys.insert(numbered_item_key(subspace, 5));
  EXPECT_EQ(keys.size(), 1000u) << "random ids collided";
  EXPECT_LT(*keys.rbegin(), numbered_item_key(subspace, 6));
  EXPECT_GT(*keys.begin(), numbered_item_key(subspace, 4));
}

}  // namespace
}  // namespace strata::recipes_detail
