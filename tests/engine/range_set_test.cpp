#include "engine/range_set.hpp"

#include <array>
#include <cstddef>
#include <memory_resource>
#include <string>
#include <string_view>

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

TEST(RangeSet, EraseCutsRangesAcrossItsEndsAndDropsThoseInside) {
  RangeSet s;
  s.insert("a", "c");
  s.insert("d", "e");
  s.insert("f", "h");
  s.erase("b", "g");
  EXPECT_EQ(s.to_vector(), (std::vector<KeyRange>{{"a", "b"}, {"g", "h"}}));
  s.erase("a", "a");  // empty: nothing
  s.erase("c", "d");  // between ranges: nothing
  EXPECT_EQ(s.to_vector(), (std::vector<KeyRange>{{"a", "b"}, {"g", "h"}}));
  s.erase("g", std::string("g\0", 2));  // splits off the first key
  EXPECT_EQ(s.to_vector(), (std::vector<KeyRange>{{"a", "b"}, {std::string("g\0", 2), "h"}}));
  s.erase("", "z");
  EXPECT_TRUE(s.empty());
}

TEST(Coalesce, SortsAndMerges) {
  std::vector<KeyRange> r{{"x", "y"}, {"a", "c"}, {"b", "d"}, {"d", "e"}};
  coalesce(r);
  EXPECT_EQ(r, (std::vector<KeyRange>{{"a", "e"}, {"x", "y"}}));
}

TEST(Coalesce, ArenaRangesMergeAndStayInTheirArena) {
  std::array<std::byte, 4096> buffer;
  base::Arena arena(buffer.data(), buffer.size());
  ArenaRanges r(&arena);
  const std::string long_end(40, 'e');
  append_range(r, "x", "y");
  append_range(r, "a", "c");
  append_range(r, "b", long_end);
  append_range(r, "d", "f");
  coalesce(r);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].begin, "a");
  EXPECT_EQ(r[0].end, "f");  // "eee..." < "f"
  EXPECT_EQ(r[1].begin, "x");
  EXPECT_EQ(r[1].end, "y");
  // The bytes (and the array) are in the arena's inline buffer.
  const auto* first = reinterpret_cast<const char*>(buffer.data());
  for (const ArenaRange& range : r) {
    for (std::string_view key : {range.begin, range.end}) {
      EXPECT_GE(key.data(), first);
      EXPECT_LE(key.data() + key.size(), first + buffer.size());
    }
  }
}

// ArenaRange::copy copies keys of 8 to 64 bytes in overlapping chunks and others with
// memcpy: every size on each side of those bounds, with and without the 00 after the end.
TEST(ArenaRange, CopiesKeysOfEverySize) {
  std::array<std::byte, 1024> buffer;
  base::Arena arena(buffer.data(), buffer.size());
  std::string bytes;
  for (int i = 0; i < 80; ++i) bytes.push_back(static_cast<char>('!' + i));
  for (std::size_t b = 0; b <= 72; ++b) {
    for (std::size_t e : {std::size_t{0}, std::size_t{7}, b, std::size_t{80} - b}) {
      for (bool end_after : {false, true}) {
        const std::string_view begin(bytes.data(), b), end(bytes.data() + 80 - e, e);
        const ArenaRange r = ArenaRange::copy(arena, begin, end, end_after);
        ASSERT_EQ(r.begin, begin) << b << " " << e;
        ASSERT_EQ(r.end, end_after ? std::string(end) + '\0' : std::string(end)) << b << " " << e;
        arena.release();
      }
    }
  }
}

}  // namespace
}  // namespace strata::engine
