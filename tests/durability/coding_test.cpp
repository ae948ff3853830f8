// Fixed-width and varint coding: round trips, byte order, truncation and overlong input.
#include "base/coding.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "support/error_matchers.hpp"

namespace base = strata::base;
using strata::ErrorCode;
using strata::testing::ThrowsCode;

namespace {

TEST(Coding, FixedWidthIsLittleEndian) {
  std::string s;
  base::put_fixed16(s, 0x0102);
  base::put_fixed32(s, 0x01020304u);
  base::put_fixed64(s, 0x0102030405060708ull);
  EXPECT_EQ(s, std::string("\x02\x01\x04\x03\x02\x01\x08\x07\x06\x05\x04\x03\x02\x01", 14));
  std::string_view in = s;
  std::uint16_t a = 0;
  std::uint32_t b = 0;
  std::uint64_t c = 0;
  ASSERT_TRUE(base::get_fixed16(in, a));
  ASSERT_TRUE(base::get_fixed32(in, b));
  ASSERT_TRUE(base::get_fixed64(in, c));
  EXPECT_EQ(a, 0x0102);
  EXPECT_EQ(b, 0x01020304u);
  EXPECT_EQ(c, 0x0102030405060708ull);
  EXPECT_TRUE(in.empty());
}

TEST(Coding, FixedWidthTruncationLeavesInputUnchanged) {
  std::string_view in("\x01\x02\x03", 3);
  std::uint32_t v = 7;
  EXPECT_FALSE(base::get_fixed32(in, v));
  EXPECT_EQ(in.size(), 3u);
  EXPECT_EQ(v, 7u);
}

TEST(Coding, Varint64RoundTripsBoundaries) {
  std::string s;
  std::vector<std::uint64_t> values;
  for (int bits = 0; bits < 64; ++bits) {
    const std::uint64_t p = std::uint64_t{1} << bits;
    values.insert(values.end(), {p - 1, p, p + 1});
  }
  values.push_back(std::numeric_limits<std::uint64_t>::max());
  for (const auto v : values) base::put_varint64(s, v);
  std::string_view in = s;
  for (const auto v : values) {
    std::uint64_t got = 0;
    ASSERT_TRUE(base::get_varint64(in, got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(in.empty());
  std::string m;
  base::put_varint64(m, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(m.size(), base::kMaxVarint64Bytes);
  EXPECT_EQ(base::varint_length(std::numeric_limits<std::uint64_t>::max()), 10u);
  EXPECT_EQ(base::varint_length(127), 1u);
  EXPECT_EQ(base::varint_length(128), 2u);
}

TEST(Coding, Varint32RoundTripsAndRejectsOverflow) {
  std::string s;
  base::put_varint32(s, 0xFFFFFFFFu);
  EXPECT_EQ(s, std::string("\xff\xff\xff\xff\x0f", 5));
  std::string_view in = s;
  std::uint32_t v = 0;
  ASSERT_TRUE(base::get_varint32(in, v));
  EXPECT_EQ(v, 0xFFFFFFFFu);

  std::string_view too_wide("\xff\xff\xff\xff\x1f", 5);  // 2^32 + ...: does not fit.
  EXPECT_FALSE(base::get_varint32(too_wide, v));
  EXPECT_EQ(too_wide.size(), 5u);
  std::string_view too_long("\x80\x80\x80\x80\x80\x00", 6);
  EXPECT_FALSE(base::get_varint32(too_long, v));
  std::string_view too_long64("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11);
  std::uint64_t w = 0;
  EXPECT_FALSE(base::get_varint64(too_long64, w));
  std::string_view too_wide64("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
  EXPECT_FALSE(base::get_varint64(too_wide64, w));
}

TEST(Coding, TruncatedVarintFailsOrThrows) {
  std::string s;
  base::put_varint64(s, 1u << 20);
  for (std::size_t cut = 0; cut < s.size(); ++cut) {
    std::string_view in(s.data(), cut);
    std::uint64_t v = 0;
    EXPECT_FALSE(base::get_varint64(in, v)) << cut;
    EXPECT_EQ(in.size(), cut);
    EXPECT_THAT([&] { (void)base::get_varint64_or_throw(in, "test input"); },
                ThrowsCode(ErrorCode::corrupt_data));
  }
  std::string_view in = s;
  EXPECT_EQ(base::get_varint32_or_throw(in, "x"), 1u << 20);
}

}  // namespace
