// The edge cases of FoundationDB's fdbclient/include/fdbclient/Atomic.h, one named test each.
#include "kv/atomic_op.hpp"

#include <string>

#include <gtest/gtest.h>

namespace strata::kv {
namespace {

using std::nullopt;
using std::string;
using T = MutationType;

string h(std::initializer_list<int> bytes) {
  string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

std::optional<string> op(T type, std::optional<string> existing, const string& param) {
  std::optional<std::string_view> e;
  if (existing) e = *existing;
  return apply_atomic(type, e, param);
}

TEST(AtomicAdd, MissingKeyTakesTheOperand) { EXPECT_EQ(op(T::add, nullopt, h({1, 0})), h({1, 0})); }
TEST(AtomicAdd, CarriesIntoTheNextByte) { EXPECT_EQ(op(T::add, h({0xff}), h({1, 0})), h({0, 1})); }
TEST(AtomicAdd, LongerExistingValueIsTruncated) {
  EXPECT_EQ(op(T::add, h({1, 2, 3}), h({1})), h({2}));
}
TEST(AtomicAdd, OverflowIsDropped) { EXPECT_EQ(op(T::add, h({0xff, 0xff}), h({1, 0})), h({0, 0})); }
TEST(AtomicAdd, EmptyExistingValueTakesTheOperand) { EXPECT_EQ(op(T::add, "", h({5})), h({5})); }
TEST(AtomicAdd, EmptyOperandGivesEmptyValue) { EXPECT_EQ(op(T::add, h({5}), ""), ""); }
TEST(AtomicAdd, NegativeTwosComplementWorks) {
  // 5 + (-1) as 4-byte little-endian.
  EXPECT_EQ(op(T::add, h({5, 0, 0, 0}), h({0xff, 0xff, 0xff, 0xff})), h({4, 0, 0, 0}));
}

TEST(AtomicBitAnd, MissingKeyTakesTheOperand) {
  EXPECT_EQ(op(T::bit_and, nullopt, h({0x0f})), h({0x0f}));
}
TEST(AtomicBitAnd, ExistingIsTruncatedToOperand) {
  EXPECT_EQ(op(T::bit_and, h({0xff, 0x0f}), h({0x0f})), h({0x0f}));
}
TEST(AtomicBitAnd, ShortExistingIsZeroPadded) {
  EXPECT_EQ(op(T::bit_and, h({0x0f}), h({0xff, 0xff})), h({0x0f, 0x00}));
}
TEST(AtomicBitAnd, EmptyExistingGivesZeros) { EXPECT_EQ(op(T::bit_and, "", h({0xff})), h({0})); }

TEST(AtomicBitOr, PadsAndOrs) {
  EXPECT_EQ(op(T::bit_or, h({1}), h({0x10, 0x10})), h({0x11, 0x10}));
}
TEST(AtomicBitOr, TruncatesAndOrs) { EXPECT_EQ(op(T::bit_or, h({1, 2, 3}), h({0x10})), h({0x11})); }
TEST(AtomicBitOr, MissingKeyTakesTheOperand) { EXPECT_EQ(op(T::bit_or, nullopt, h({7})), h({7})); }

TEST(AtomicBitXor, TruncatesAndXors) {
  EXPECT_EQ(op(T::bit_xor, h({0x0f, 0x0f}), h({0xff})), h({0xf0}));
}

TEST(AtomicMax, ComparesFittedExistingUnsigned) {
  EXPECT_EQ(op(T::max, h({0, 1}), h({0xff})), h({0xff}));  // 256 cut to 0
  EXPECT_EQ(op(T::max, h({5}), h({3, 0})), h({5, 0}));
}
TEST(AtomicMax, EmptyExistingTakesTheOperand) { EXPECT_EQ(op(T::max, "", h({3})), h({3})); }
TEST(AtomicMax, MissingKeyTakesTheOperand) { EXPECT_EQ(op(T::max, nullopt, h({3})), h({3})); }

TEST(AtomicMin, ComparesFittedExistingUnsigned) {
  EXPECT_EQ(op(T::min, h({5}), h({3, 0})), h({3, 0}));
  EXPECT_EQ(op(T::min, h({0, 1}), h({0xff})), h({0}));
}
TEST(AtomicMin, EmptyExistingCountsAsZero) { EXPECT_EQ(op(T::min, "", h({7})), h({0})); }
TEST(AtomicMin, MissingKeyTakesTheOperand) { EXPECT_EQ(op(T::min, nullopt, h({7})), h({7})); }
TEST(AtomicMin, EmptyOperandGivesEmptyValue) { EXPECT_EQ(op(T::min, h({7}), ""), ""); }

TEST(AtomicByteMin, IsLexicographic) {
  EXPECT_EQ(op(T::byte_min, "abc", "abd"), "abc");
  EXPECT_EQ(op(T::byte_min, "ab", "abc"), "ab");
  EXPECT_EQ(op(T::byte_min, h({0x80}), h({0x7f})), h({0x7f}));  // bytes are unsigned
}
TEST(AtomicByteMax, IsLexicographic) {
  EXPECT_EQ(op(T::byte_max, "", "a"), "a");
  EXPECT_EQ(op(T::byte_max, h({0x80}), h({0x7f})), h({0x80}));
}

TEST(AtomicAppendIfFits, Appends) { EXPECT_EQ(op(T::append_if_fits, "ab", "cd"), "abcd"); }
TEST(AtomicAppendIfFits, MissingKeyTakesTheOperand) {
  EXPECT_EQ(op(T::append_if_fits, nullopt, "cd"), "cd");
}
TEST(AtomicAppendIfFits, SilentlyKeepsTheValuePastTheLimit) {
  string big(99'999, 'x');
  EXPECT_EQ(op(T::append_if_fits, big, "yy"), big);
  EXPECT_EQ(op(T::append_if_fits, big, "y"), big + "y");
}

TEST(AtomicCompareAndClear, ClearsOnMatch) {
  EXPECT_EQ(op(T::compare_and_clear, "x", "x"), nullopt);
}
TEST(AtomicCompareAndClear, KeepsOnMismatch) { EXPECT_EQ(op(T::compare_and_clear, "x", "y"), "x"); }
TEST(AtomicCompareAndClear, MissingKeyStaysMissing) {
  EXPECT_EQ(op(T::compare_and_clear, nullopt, "x"), nullopt);
}

}  // namespace
}  // namespace strata::kv
