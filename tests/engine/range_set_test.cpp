#include "engine/range_set.hpp"

#include <gtest/gtest.h>

namespace strata::engine {
namespace {

TEST(RangeSet, MergesOverlappingAndTouchingRanges) {
  RangeSet s;
  s.insert("c", "e");
  s.insert("a", "b");
  s.insert("e", "f");  // touches [c, e)
  s.insert("d", "d");  // empty: ignored
  EXPECT_EQ(s.to_vector(), (std::vector<KeyRange>{{"a", "b"}, {"c", "f"}}));
  s.insert("b", "c");
  EXPECT_EQ(s.to_vector(), (std::vector<KeyRange>{{"a", "f"}}));
}

TEST(RangeSet, ContainsIsHalfOpen) {
  RangeSet s;
  s.insert("b", "d");
  EXPECT_FALSE(s.contains("a"));
  EXPECT_TRUE(s.contains("b"));
  EXPECT_TRUE(s.contains("c\xff"));
  EXPECT_FALSE(s.contains("d"));
}

TEST(RangeSet, SwallowsRangesInside) {
  RangeSet s;
  s.insert("b", "c");
  s.insert("d", "e");
  s.insert("a", "z");
  EXPECT_EQ(s.to_vector(), (std::vector<KeyRange>{{"a", "z"}}));
}

TEST(Coalesce, SortsAndMerges) {
  std::vector<KeyRange> r{{"x", "y"}, {"a", "c"}, {"b", "d"}, {"d", "e"}};
  coalesce(r);
  EXPECT_EQ(r, (std::vector<KeyRange>{{"a", "e"}, {"x", "y"}}));
}

}  // namespace
}  // namespace strata::engine
