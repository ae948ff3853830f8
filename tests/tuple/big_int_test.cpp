// BigInt: decimal text both ways, limits, and numeric order.
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/tuple.hpp"

#include "support/error_matchers.hpp"
#include "tuple_test_support.hpp"

namespace strata {
namespace {

using strata::testing::ThrowsCode;

TEST(BigInt, DecimalRoundTrips) {
  for (const char* text :
       {"0", "1", "-1", "255", "256", "-9223372036854775808", "18446744073709551615",
        "18446744073709551616", "-18446744073709551616", "1000000000", "999999999999999999999",
        "-340282366920938463463374607431768211456"}) {
    EXPECT_EQ(BigInt(text).to_string(), text);
  }
}

TEST(BigInt, MagnitudeIsBigEndianWithoutLeadingZeros) {
  EXPECT_EQ(tuple_test::to_hex(BigInt("18446744073709551616").magnitude()), "010000000000000000");
  EXPECT_EQ(BigInt("0").magnitude(), "");
  EXPECT_EQ(BigInt("000123").to_string(), "123");
  EXPECT_EQ(BigInt(std::numeric_limits<std::int64_t>::min()).to_string(), "-9223372036854775808");
}

TEST(BigInt, MinusZeroIsZero) {
  EXPECT_FALSE(BigInt("-0").negative());
  EXPECT_EQ(BigInt("-0"), BigInt("0"));
  EXPECT_FALSE(BigInt::from_magnitude(true, std::string(3, '\0')).negative());
}

TEST(BigInt, MalformedTextThrowsInvalidArgument) {
  for (const char* text : {"", "-", "+1", "1a", " 1", "1 ", "--1", "0x10", "1.0"}) {
    EXPECT_THAT([text] { BigInt b(text); }, ThrowsCode(ErrorCode::invalid_argument)) << text;
  }
}

TEST(BigInt, MagnitudeIsLimitedTo255Bytes) {
  const std::string max_255(255, '\xff');
  const BigInt largest = BigInt::from_magnitude(false, max_255);
  EXPECT_EQ(BigInt(largest.to_string()), largest);
  EXPECT_THAT([] { (void)BigInt::from_magnitude(false, std::string(256, '\x01')); },
              ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT([] { BigInt b(std::string(700, '9')); }, ThrowsCode(ErrorCode::invalid_argument));
  // 256^255 itself needs 256 bytes.
  const std::string just_above = BigInt::from_magnitude(false, max_255).to_string();
  std::string plus_one = just_above;
  for (auto it = plus_one.rbegin(); it != plus_one.rend(); ++it) {
    if (*it == '9') {
      *it = '0';
      continue;
    }
    ++*it;
    break;
  }
  EXPECT_THAT([&] { BigInt b(plus_one); }, ThrowsCode(ErrorCode::invalid_argument));
}

TEST(BigInt, LargestMagnitudesPackAndUnpack) {
  const Tuple t{BigInt::from_magnitude(false, std::string(255, '\xff')),
                BigInt::from_magnitude(true, std::string(255, '\xff'))};
  const std::string bytes = t.pack();
  EXPECT_EQ(bytes.size(), 2u * 257u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1d);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0xff);
  EXPECT_EQ(static_cast<unsigned char>(bytes[257]), 0x0b);
  EXPECT_EQ(static_cast<unsigned char>(bytes[258]), 0x00);
  EXPECT_TRUE(tuple_test::identical(t, Tuple::unpack(bytes)));
}

TEST(BigInt, OrdersNumerically) {
  const char* ascending[] = {"-18446744073709551617",
                             "-18446744073709551616",
                             "-256",
                             "-1",
                             "0",
                             "1",
                             "255",
                             "18446744073709551616",
                             "18446744073709551617",
                             "340282366920938463463374607431768211456"};
  for (std::size_t i = 0; i + 1 < std::size(ascending); ++i) {
    EXPECT_LT(BigInt(ascending[i]), BigInt(ascending[i + 1])) << ascending[i];
    EXPECT_GT(BigInt(ascending[i + 1]), BigInt(ascending[i])) << ascending[i];
  }
}

}  // namespace
}  // namespace strata
