// key_less and key_compare must order exactly as std::string_view does (unsigned bytes, then
// length): the skiplist, the resolver and range reads all rely on agreeing with std::map's order.
// key_equal must agree with its operator== (point lookups rely on it).
#include "base/key_compare.hpp"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace strata::base {
namespace {

int sign(int x) { return (x > 0) - (x < 0); }

TEST(KeyLess, MatchesStringViewOrderOnEdgeCases) {
  const std::vector<std::string> keys = {"",
                                         std::string(1, '\0'),
                                         std::string(2, '\0'),
                                         "\x01",
                                         "\x7f",
                                         "\x80",
                                         "\xff",
                                         "\xff\xff",
                                         "abcdefg",
                                         "abcdefgh",
                                         std::string("abcdefgh\0", 9),
                                         "abcdefghi",
                                         "abcdefgi",
                                         "abcdefhh",
                                         "bbcdefgh",
                                         std::string("abcdefgh\xff", 9),
                                         std::string(16, '\xff')};
  for (const std::string& a : keys) {
    for (const std::string& b : keys) {
      EXPECT_EQ(key_less(a, b), std::string_view(a) < std::string_view(b))
          << testing::PrintToString(a) << " vs " << testing::PrintToString(b);
      EXPECT_EQ(sign(key_compare(a, b)), sign(std::string_view(a).compare(b)))
          << testing::PrintToString(a) << " vs " << testing::PrintToString(b);
    }
  }
}

TEST(KeyLess, MatchesStringViewOrderOnRandomKeys) {
  std::mt19937 rng(7);
  auto random_key = [&] {
    std::string k(rng() % 24, '\0');
    for (char& c : k) c = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : 'a' + rng() % 3);
    return k;
  };
  for (int i = 0; i < 20000; ++i) {
    std::string a = random_key();
    std::string b = rng() % 2 == 0 ? random_key() : a.substr(0, rng() % (a.size() + 1));
    ASSERT_EQ(key_less(a, b), std::string_view(a) < std::string_view(b));
    ASSERT_EQ(key_less(b, a), std::string_view(b) < std::string_view(a));
    ASSERT_EQ(sign(key_compare(a, b)), sign(std::string_view(a).compare(b)));
  }
}

// Keys of 8 to 24 bytes that differ in one byte only, at every position: the bytes past the
// last whole 8 are compared as the 8 bytes ending the shorter key, overlapping bytes found
// equal before, and must order as the byte that differs does.
TEST(KeyLess, OrdersByTheOneDifferingByteAtEveryPosition) {
  for (std::size_t size = 8; size <= 24; ++size) {
    for (std::size_t at = 0; at < size; ++at) {
      for (int low : {0x00, 0x7f, 0x80}) {
        std::string a(size, 'k');
        std::string b = a;
        a[at] = static_cast<char>(low);
        b[at] = static_cast<char>(0xff);
        for (std::size_t cut : {size, size - 1}) {  // b as long, and one byte shorter
          const std::string bb = b.substr(0, cut);
          ASSERT_EQ(key_less(a, bb), std::string_view(a) < std::string_view(bb)) << size << at;
          ASSERT_EQ(key_less(bb, a), std::string_view(bb) < std::string_view(a)) << size << at;
          ASSERT_EQ(sign(key_compare(a, bb)), sign(std::string_view(a).compare(bb)));
        }
      }
    }
  }
}

// key_equal must agree with std::string_view's operator== at every size (the word, the
// overlapping last word, the two halves below 8 bytes and the byte loop below 4) and with
// the one differing byte at every position.
TEST(KeyEqual, MatchesStringViewEqualityAtEverySizeAndPosition) {
  for (std::size_t size = 0; size <= 40; ++size) {
    const std::string a(size, 'k');
    EXPECT_TRUE(key_equal(a, std::string(size, 'k'))) << size;
    EXPECT_FALSE(key_equal(a, std::string(size + 1, 'k'))) << size;
    if (size > 0) {
      EXPECT_FALSE(key_equal(a, a.substr(0, size - 1))) << size;
    }
    for (std::size_t at = 0; at < size; ++at) {
      std::string b = a;
      b[at] = static_cast<char>(0xff);
      ASSERT_FALSE(key_equal(a, b)) << size << " " << at;
      ASSERT_FALSE(key_equal(b, a)) << size << " " << at;
    }
  }
}

TEST(KeyEqual, MatchesStringViewEqualityOnRandomKeys) {
  std::mt19937 rng(11);
  for (int i = 0; i < 20000; ++i) {
    std::string a(rng() % 24, '\0');
    for (char& c : a) c = static_cast<char>('a' + rng() % 2);
    std::string b = a;
    if (!b.empty() && rng() % 2 == 0) b[rng() % b.size()] = static_cast<char>('a' + rng() % 2);
    ASSERT_EQ(key_equal(a, b), std::string_view(a) == std::string_view(b));
  }
}

}  // namespace
}  // namespace strata::base
