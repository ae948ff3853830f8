// CRC-32C: known vectors (RFC 3720 B.4 and the usual check value), hardware == software,
// extend() composes, masking round-trips.
#include "base/crc32c.hpp"

#include <random>
#include <string>

#include <gtest/gtest.h>

namespace crc = strata::base::crc32c;

namespace {

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc::value("123456789"), 0xE3069283u);
  EXPECT_EQ(crc::value(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc::value(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending(32, '\0');
  std::string descending(32, '\0');
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<char>(i);
    descending[i] = static_cast<char>(31 - i);
  }
  EXPECT_EQ(crc::value(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc::value(descending), 0x113FDB5Cu);
  EXPECT_EQ(crc::value(""), 0u);
}

TEST(Crc32c, SoftwareMatchesKnownVector) {
  EXPECT_EQ(crc::extend_software(0, "123456789", 9), 0xE3069283u);
}

TEST(Crc32c, HardwareEqualsSoftwareOnRandomData) {
  if (!crc::hardware_available()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  std::mt19937_64 rng(42);
  std::string data(70000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  // Every length and alignment near the start, then long buffers.
  for (std::size_t offset = 0; offset < 9; ++offset) {
    for (std::size_t n = 0; n < 300; ++n) {
      ASSERT_EQ(crc::extend_hardware(0x1234, data.data() + offset, n),
                crc::extend_software(0x1234, data.data() + offset, n))
          << "offset " << offset << " length " << n;
    }
  }
  EXPECT_EQ(crc::extend_hardware(0, data.data() + 3, data.size() - 3),
            crc::extend_software(0, data.data() + 3, data.size() - 3));
}

TEST(Crc32c, ExtendEqualsValueOfConcatenation) {
  const std::string a = "hello, ";
  const std::string b = "world";
  EXPECT_EQ(crc::extend(crc::value(a), b), crc::value(a + b));
  EXPECT_NE(crc::value("a"), crc::value("b"));
}

TEST(Crc32c, MaskRoundTripsAndChangesTheValue) {
  for (const std::uint32_t c : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu, 0x80000000u}) {
    EXPECT_EQ(crc::unmask(crc::mask(c)), c);
    EXPECT_NE(crc::mask(c), c);
    EXPECT_NE(crc::mask(crc::mask(c)), crc::mask(c));
  }
}

}  // namespace
