// Malformed bytes: every entry of tests/tuple/data/invalid.txt, the exact error messages, and
// damaged forms of every valid vector (never a crash, only Error(invalid_tuple)).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/subspace.hpp"
#include "strata/tuple.hpp"

#include "support/error_matchers.hpp"
#include "tuple_test_support.hpp"

namespace strata {
namespace {

using strata::testing::ThrowsCode;
using strata::testing::ThrowsCodeWith;
using tuple_test::from_hex;

auto unpacking(const std::string& bytes) {
  return [bytes] { (void)Tuple::unpack(bytes); };
}

TEST(TupleMalformed, EveryInvalidFileEntryThrowsInvalidTuple) {
  const auto entries = tuple_test::load_invalid();
  ASSERT_GT(entries.size(), 100u);
  for (const auto& e : entries) {
    EXPECT_THAT(unpacking(e.bytes), ThrowsCode(ErrorCode::invalid_tuple))
        << "invalid.txt:" << e.line << " (" << e.category << ")";
  }
}

TEST(TupleMalformed, MessagesNameOffsetAndTypeCode) {
  EXPECT_THAT(unpacking(from_hex("15011601")),
              ThrowsCodeWith(ErrorCode::invalid_tuple,
                             "truncated integer at offset 2 (type code 0x16): needs 2 bytes, "
                             "1 left"));
  EXPECT_THAT(unpacking(from_hex("1501 06")), ThrowsCodeWith(ErrorCode::invalid_tuple,
                                                             "unknown type code at offset 2 (type "
                                                             "code 0x06)"));
  EXPECT_THAT(unpacking(from_hex("1400ff")),
              ThrowsCodeWith(ErrorCode::invalid_tuple,
                             "escape byte 0xff where an element must "
                             "start at offset 2 (type code 0xff)"));
  EXPECT_THAT(unpacking(from_hex("026100 02c300")),
              ThrowsCodeWith(ErrorCode::invalid_tuple,
                             "invalid UTF-8 in unicode string at offset 3 (type code 0x02): "
                             "byte 0 of the string"));
  EXPECT_THAT(unpacking(from_hex("1d090102")),
              ThrowsCodeWith(ErrorCode::invalid_tuple,
                             "truncated big integer at offset 0 (type "
                             "code 0x1d): needs 9 bytes, 2 left"));
  EXPECT_THAT(unpacking(from_hex("14 2080")),
              ThrowsCodeWith(ErrorCode::invalid_tuple,
                             "truncated float at offset 1 (type code "
                             "0x20)"));
  EXPECT_THAT(unpacking(from_hex("30ab")), ThrowsCodeWith(ErrorCode::invalid_tuple,
                                                          "truncated UUID at offset 0 (type code "
                                                          "0x30)"));
  EXPECT_THAT(unpacking(from_hex("05 3301")),
              ThrowsCodeWith(ErrorCode::invalid_tuple,
                             "truncated versionstamp at offset 1 (type "
                             "code 0x33)"));
  EXPECT_THAT(unpacking(from_hex("0514ff")),
              ThrowsCodeWith(ErrorCode::invalid_tuple, "at offset 2 (type code 0xff)"));
}

TEST(TupleMalformed, SubspaceUnpackOffsetsCountTheWholeKey) {
  const Subspace q(Tuple{"Q"});  // prefix 02 51 00
  EXPECT_THAT([&] { (void)q.unpack(from_hex("025100 1501 16")); },
              ThrowsCodeWith(ErrorCode::invalid_tuple,
                             "truncated integer at offset 5 (type "
                             "code 0x16)"));
}

// Decision (docs/tuple.md): unlike FDB Python, strata rejects a string or nested tuple
// cut off before its terminator, since pack() never produces one.
TEST(TupleMalformed, UnterminatedStringsAndNestedTuplesAreRejected) {
  EXPECT_THAT(unpacking(from_hex("016162")), ThrowsCodeWith(ErrorCode::invalid_tuple,
                                                            "unterminated byte string at offset 0 "
                                                            "(type code 0x01)"));
  EXPECT_THAT(unpacking(from_hex("0100ff")), ThrowsCode(ErrorCode::invalid_tuple));
  EXPECT_THAT(unpacking(from_hex("1402")), ThrowsCodeWith(ErrorCode::invalid_tuple,
                                                          "unterminated unicode string at offset 1 "
                                                          "(type code 0x02)"));
  EXPECT_THAT(unpacking(from_hex("05")), ThrowsCodeWith(ErrorCode::invalid_tuple,
                                                        "unterminated nested tuple at offset 0 "
                                                        "(type code 0x05)"));
  EXPECT_THAT(unpacking(from_hex("051400ff")), ThrowsCode(ErrorCode::invalid_tuple));
}

TEST(TupleMalformed, NestingDepthIsBounded) {
  auto nested_bytes = [](int depth) {
    return std::string(static_cast<std::size_t>(depth), '\x05') +
           std::string(static_cast<std::size_t>(depth), '\x00');
  };
  EXPECT_NO_THROW((void)Tuple::unpack(nested_bytes(256)));
  EXPECT_THAT(unpacking(nested_bytes(257)),
              ThrowsCodeWith(ErrorCode::invalid_tuple, "nested tuple too deep at offset 256"));
  EXPECT_THAT(unpacking(std::string(100000, '\x05')), ThrowsCode(ErrorCode::invalid_tuple));

  Tuple deep;
  for (int i = 0; i < 257; ++i) deep = Tuple{Element(deep)};
  EXPECT_THAT([&] { (void)deep.pack(); }, ThrowsCode(ErrorCode::invalid_argument));
}

// FDB's decoders accept integers in a longer form than needed; so does strata, giving the
// value (and the canonical C++ type). Re-packing gives the minimal form.
TEST(TupleMalformed, NonMinimalIntegerFormsDecodeToTheirValue) {
  struct Case {
    const char* hex;
    Tuple expected;
  };
  const Case cases[] = {
      {"1d0105", Tuple{5}},
      {"1d00", Tuple{0}},
      {"0bff", Tuple{0}},
      {"160005", Tuple{5}},
      {"13ff", Tuple{0}},
      {"1d09000000000000000001", Tuple{1}},
      {"0bf6ffffffffffffffffff", Tuple{0}},
      {"0bf6fffffffffffffffffe", Tuple{-1}},
      {"1d097fffffffffffffffff", Tuple{BigInt("2361183241434822606847")}},
  };
  for (const Case& c : cases) {
    Tuple got;
    ASSERT_NO_THROW(got = Tuple::unpack(from_hex(c.hex))) << c.hex;
    EXPECT_TRUE(tuple_test::identical(c.expected, got)) << c.hex;
  }
}

// Every prefix of every valid vector either decodes or throws Error(invalid_tuple).
TEST(TupleMalformed, TruncatedVectorsNeverCrash) {
  const auto vectors = tuple_test::load_vectors();
  ASSERT_FALSE(vectors.empty());
  int rejected = 0;
  for (const auto& v : vectors) {
    for (std::size_t n = 0; n < v.bytes.size(); ++n) {
      try {
        (void)Tuple::unpack(std::string_view(v.bytes).substr(0, n));
      } catch (const Error& e) {
        ASSERT_EQ(e.error_code(), ErrorCode::invalid_tuple) << e.what();
        ++rejected;
      }
    }
  }
  EXPECT_GT(rejected, 1000);
}

// Flipping any single byte of a valid vector either decodes to something that re-packs
// and re-decodes stably, or throws an Error.
TEST(TupleMalformed, MutatedVectorsDecodeStablyOrThrow) {
  const auto vectors = tuple_test::load_vectors();
  ASSERT_FALSE(vectors.empty());
  for (const auto& v : vectors) {
    for (std::size_t i = 0; i < v.bytes.size() && i < 24; ++i) {
      for (unsigned char replacement : {0x00, 0x05, 0x14, 0x1d, 0xff}) {
        std::string bytes = v.bytes;
        bytes[i] = static_cast<char>(replacement);
        Tuple t;
        try {
          t = Tuple::unpack(bytes);
        } catch (const Error& e) {
          ASSERT_EQ(e.error_code(), ErrorCode::invalid_tuple) << e.what();
          continue;
        }
        std::string repacked;
        try {
          repacked = t.pack();
        } catch (const Error& e) {  // only an incomplete versionstamp may refuse to pack
          ASSERT_EQ(e.error_code(), ErrorCode::invalid_argument) << e.what();
          continue;
        }
        EXPECT_TRUE(tuple_test::identical(t, Tuple::unpack(repacked)));
      }
    }
  }
}

}  // namespace
}  // namespace strata
