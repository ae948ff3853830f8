// CRC-32C: known vectors (RFC 3720 B.4 and the usual check value), hardware == software,
// extend() composes, combine() joins two CRCs, prefix tables give any range's CRC, masking
// round-trips.
#include "base/crc32c.hpp"

#include <random>
#include <string>

#include <gtest/gtest.h>

#include "base/crc32c_prefixes.hpp"

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

std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(Crc32c, CombineJoinsTheCrcsOfTwoStrings) {
  EXPECT_EQ(crc::combine(crc::value("1234"), crc::value("56789"), 5), 0xE3069283u);
  std::mt19937_64 rng(7);
  for (const std::size_t n_a : {0UL, 1UL, 5UL, 300UL}) {
    for (const std::size_t n_b : {0UL, 1UL, 8UL, 255UL, 256UL, 4097UL, 70000UL}) {
      const std::string a = random_bytes(rng, n_a);
      const std::string b = random_bytes(rng, n_b);
      EXPECT_EQ(crc::combine(crc::value(a), crc::value(b), n_b), crc::value(a + b))
          << n_a << " + " << n_b;
    }
  }
}

TEST(Crc32c, PrefixChecksumsExtendACrcByAnyRange) {
  std::mt19937_64 rng(11);
  constexpr std::size_t kStride = crc::PrefixChecksums::kStride;
  for (const std::size_t size : {0UL, 1UL, kStride - 1, kStride, 5 * kStride + 3}) {
    const std::string data = random_bytes(rng, size);
    const crc::PrefixChecksums table(data);
    for (std::size_t begin = 0; begin <= size; begin += 1 + begin / 7) {
      for (std::size_t end = begin; end <= size; end += 1 + (end - begin) / 5) {
        ASSERT_EQ(table.extend(0, begin, end), crc::value(data.substr(begin, end - begin)))
            << "[" << begin << ", " << end << ") of " << size;
        ASSERT_EQ(table.extend(crc::value("ab"), begin, end),
                  crc::value("ab" + data.substr(begin, end - begin)))
            << "ab + [" << begin << ", " << end << ") of " << size;
      }
      ASSERT_EQ(table.extend(0, begin, size), crc::value(data.substr(begin))) << begin;
    }
  }
}

TEST(Crc32c, MaskRoundTripsAndChangesTheValue) {
  for (const std::uint32_t c : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu, 0x80000000u}) {
    EXPECT_EQ(crc::unmask(crc::mask(c)), c);
    EXPECT_NE(crc::mask(c), c);
    EXPECT_NE(crc::mask(crc::mask(c)), crc::mask(c));
  }
}

}  // namespace
