// Ordering: Tuple operator<=> must agree with the order of the packed bytes, for awkward
// hand-picked values and for thousands of random tuples; plus round trips and ranges.
#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>

#include <gtest/gtest.h>

#include "strata/subspace.hpp"
#include "strata/tuple.hpp"

#include "tuple_test_support.hpp"

namespace strata {
namespace {

using tuple_test::to_hex;

int sign(std::strong_ordering o) { return o < 0 ? -1 : (o > 0 ? 1 : 0); }
int sign(int c) { return c < 0 ? -1 : (c > 0 ? 1 : 0); }

// Asserts that `ascending` is strictly increasing both as tuples and as packed bytes.
void expect_strictly_ascending(const std::vector<Tuple>& ascending) {
  for (std::size_t i = 0; i + 1 < ascending.size(); ++i) {
    const Tuple& a = ascending[i];
    const Tuple& b = ascending[i + 1];
    EXPECT_LT(a, b) << describe(a) << " vs " << describe(b);
    EXPECT_LT(a.pack(), b.pack()) << to_hex(a.pack()) << " vs " << to_hex(b.pack());
  }
  for (std::size_t i = 0; i < ascending.size(); ++i) {  // every pair, both ways
    for (std::size_t j = 0; j < ascending.size(); ++j) {
      EXPECT_EQ(sign(ascending[i] <=> ascending[j]), sign(i <=> j)) << i << " " << j;
    }
  }
}

Element f64(std::uint64_t bits) { return Element(std::bit_cast<double>(bits)); }
Element f32(std::uint32_t bits) { return Element(std::bit_cast<float>(bits)); }

TEST(TupleOrder, BothZerosNegativeBeforePositive) {
  expect_strictly_ascending({Tuple{-1.0}, Tuple{-0.0}, Tuple{0.0}, Tuple{1.0}});
  expect_strictly_ascending({Tuple{-1.0f}, Tuple{-0.0f}, Tuple{0.0f}, Tuple{1.0f}});
}

TEST(TupleOrder, NaNsByPayloadAtBothEnds) {
  expect_strictly_ascending({
      Tuple{f64(0xffffffffffffffff)},
      Tuple{f64(0xfff8000000000001)},
      Tuple{f64(0xfff8000000000000)},
      Tuple{f64(0xfff0000000000001)},
      Tuple{-std::numeric_limits<double>::infinity()},
      Tuple{-1.0},
      Tuple{f64(0x8000000000000001)},
      Tuple{-0.0},
      Tuple{0.0},
      Tuple{f64(0x0000000000000001)},
      Tuple{1.0},
      Tuple{std::numeric_limits<double>::infinity()},
      Tuple{f64(0x7ff0000000000001)},
      Tuple{f64(0x7ff8000000000000)},
      Tuple{f64(0x7ff8000000000001)},
      Tuple{f64(0x7fffffffffffffff)},
  });
  expect_strictly_ascending({Tuple{f32(0xffc00001)}, Tuple{f32(0xffc00000)}, Tuple{f32(0xff800000)},
                             Tuple{f32(0x80000000)}, Tuple{f32(0x00000000)}, Tuple{f32(0x7f800000)},
                             Tuple{f32(0x7fc00000)}, Tuple{f32(0x7fc00001)}});
}

TEST(TupleOrder, ByteStringsWithZeroBytes) {
  const std::string zero(1, '\0');
  expect_strictly_ascending({
      Tuple{Bytes{""}},
      Tuple{Bytes{zero}},
      Tuple{Bytes{zero + zero}},
      Tuple{Bytes{zero + "\xff"}},
      Tuple{Bytes{"\x01"}},
      Tuple{Bytes{"a"}},
      Tuple{Bytes{"a"}, nullptr},
      Tuple{Bytes{"a"}, Bytes{""}},
      Tuple{Bytes{"a" + zero}},
      Tuple{Bytes{"a" + zero}, nullptr},
      Tuple{Bytes{"a" + zero + zero}},
      Tuple{Bytes{"a" + zero + "\x01"}},
      Tuple{Bytes{"a\x01"}},
      Tuple{Bytes{"\xff"}},
      Tuple{Bytes{"\xff\xff"}},
  });
}

TEST(TupleOrder, NestedNullsAndEmptyTuples) {
  const Element empty(Tuple{});
  const Element one_null(Tuple{nullptr});
  expect_strictly_ascending({
      Tuple{nullptr},
      Tuple{nullptr, nullptr},
      Tuple{empty},
      Tuple{empty, nullptr},
      Tuple{empty, empty},
      Tuple{one_null},
      Tuple{Element(Tuple{nullptr, nullptr})},
      Tuple{Element(Tuple{nullptr, empty})},
      Tuple{Element(Tuple{nullptr, 1})},
      Tuple{Element(Tuple{Bytes{"a"}})},
      Tuple{Element(Tuple{Bytes{"a"}, nullptr})},
      Tuple{Element(Tuple{Bytes{std::string("a\0", 2)}})},
      Tuple{Element(Tuple{empty})},
      Tuple{Element(Tuple{one_null})},
      Tuple{Element(Tuple{1})},
  });
}

TEST(TupleOrder, IntegerBoundariesAcrossInt64Uint64AndBigInt) {
  const std::int64_t min64 = std::numeric_limits<std::int64_t>::min();
  const std::int64_t max64 = std::numeric_limits<std::int64_t>::max();
  expect_strictly_ascending({
      Tuple{BigInt("-4722366482869645213696")},  // -2^72
      Tuple{BigInt("-18446744073709551617")},    // -(2^64+1)
      Tuple{BigInt("-18446744073709551616")},    // -2^64
      Tuple{BigInt("-18446744073709551615")},    // -(2^64-1)
      Tuple{BigInt("-9223372036854775809")},     // -2^63-1
      Tuple{min64},
      Tuple{min64 + 1},
      Tuple{-256},
      Tuple{-255},
      Tuple{-1},
      Tuple{0},
      Tuple{1},
      Tuple{255},
      Tuple{256},
      Tuple{max64 - 1},
      Tuple{max64},
      Tuple{std::uint64_t{1} << 63},
      Tuple{~std::uint64_t{0} - 1},
      Tuple{~std::uint64_t{0}},
      Tuple{BigInt("18446744073709551616")},  // 2^64
      Tuple{BigInt("18446744073709551617")},
      Tuple{BigInt("4722366482869645213696")},  // 2^72
  });
}

TEST(TupleOrder, CrossTypeOrderIsByTypeCode) {
  Versionstamp vs;
  vs.tr[0] = 0;
  expect_strictly_ascending({Tuple{nullptr}, Tuple{Bytes{"z"}}, Tuple{"a"}, Tuple{Element(Tuple{})},
                             Tuple{-1}, Tuple{1}, Tuple{0.5f}, Tuple{0.5}, Tuple{false},
                             Tuple{true}, Tuple{Uuid{}}, Tuple{vs}});
}

TEST(TupleOrder, ShorterTupleSortsBeforeItsExtensions) {
  expect_strictly_ascending({Tuple{}, Tuple{nullptr}, Tuple{"a"}, Tuple{"a", nullptr},
                             Tuple{"a", 1}, Tuple{std::string("a\0", 2)}});
}

// The property test of FDB's tuple_tests.tupleTest, over all types and nesting depth 3.
class RandomTupleProperties : public ::testing::Test {
 protected:
  void SetUp() override {
    tuple_test::RandomTuples gen(20240601);
    for (int i = 0; i < 3000; ++i) tuples_.push_back(gen.tuple(3));
    for (const Tuple& t : tuples_) packed_.push_back(t.pack());
  }
  std::vector<Tuple> tuples_;
  std::vector<std::string> packed_;
};

TEST_F(RandomTupleProperties, UnpackOfPackIsIdentity) {
  for (std::size_t i = 0; i < tuples_.size(); ++i) {
    ASSERT_TRUE(tuple_test::identical(tuples_[i], Tuple::unpack(packed_[i]))) << to_hex(packed_[i]);
  }
}

TEST_F(RandomTupleProperties, SortingByBytesEqualsSortingByTupleOrder) {
  std::vector<std::size_t> by_bytes(tuples_.size());
  std::iota(by_bytes.begin(), by_bytes.end(), 0);
  std::vector<std::size_t> by_tuple = by_bytes;
  std::stable_sort(by_bytes.begin(), by_bytes.end(),
                   [&](std::size_t a, std::size_t b) { return packed_[a] < packed_[b]; });
  std::stable_sort(by_tuple.begin(), by_tuple.end(),
                   [&](std::size_t a, std::size_t b) { return tuples_[a] < tuples_[b]; });
  EXPECT_EQ(by_bytes, by_tuple);
  // And every pair agrees, including equality.
  for (std::size_t i = 0; i < tuples_.size(); i += 3) {
    for (std::size_t j = 0; j < tuples_.size(); ++j) {
      ASSERT_EQ(sign(tuples_[i] <=> tuples_[j]), sign(packed_[i].compare(packed_[j])))
          << describe(tuples_[i]) << " vs " << describe(tuples_[j]);
      ASSERT_EQ(tuples_[i] == tuples_[j], packed_[i] == packed_[j]);
    }
  }
}

TEST_F(RandomTupleProperties, RangeHoldsExactlyTheStrictExtensions) {
  tuple_test::RandomTuples gen(77);
  const Subspace space(Tuple{"s"}, "\xfe");
  auto inside = [](const KeyRange& r, const std::string& key) {
    return r.begin <= key && key < r.end;
  };
  for (std::size_t i = 0; i < tuples_.size(); ++i) {
    const Tuple& t = tuples_[i];
    const KeyRange r = space.range(t);
    EXPECT_FALSE(inside(r, space.pack(t)));
    Tuple extended = t;
    extended.append(gen.element(2));
    EXPECT_TRUE(inside(r, space.pack(extended))) << describe(extended);
    extended.append(gen.element(1));
    EXPECT_TRUE(inside(r, space.pack(extended))) << describe(extended);
    // An unrelated tuple is inside iff it extends t element by element.
    const Tuple& other = tuples_[(i * 7919 + 1) % tuples_.size()];
    const bool extends = other.size() > t.size() && std::equal(t.begin(), t.end(), other.begin());
    EXPECT_EQ(inside(r, space.pack(other)), extends) << describe(t) << " / " << describe(other);
  }
}

}  // namespace
}  // namespace strata
