// Golden bytes: every line of tests/tuple/data/vectors.txt both ways, and the worked
// examples of FoundationDB's design/tuple.md and bindings/python/fdb/tuple.py written with the C++
// API.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/subspace.hpp"
#include "strata/tuple.hpp"

#include "support/error_matchers.hpp"
#include "tuple/tuple_codec.hpp"
#include "tuple_test_support.hpp"

namespace strata {
namespace {

using strata::testing::ThrowsCode;
using tuple_test::from_hex;
using tuple_test::to_hex;

TEST(TupleGolden, VectorFileHasVectors) {
  // A missing or empty data file must not let the tests below pass vacuously.
  EXPECT_GT(tuple_test::load_vectors().size(), 400u);
}

TEST(TupleGolden, EveryVectorPacksToItsBytes) {
  const auto vectors = tuple_test::load_vectors();
  ASSERT_FALSE(vectors.empty());
  for (const auto& v : vectors) {
    EXPECT_EQ(to_hex(v.tuple.pack()), to_hex(v.bytes))
        << "vectors.txt:" << v.line << " " << v.literal;
  }
}

TEST(TupleGolden, EveryVectorUnpacksToItsTupleWithExactTypesAndBits) {
  const auto vectors = tuple_test::load_vectors();
  ASSERT_FALSE(vectors.empty());
  for (const auto& v : vectors) {
    Tuple got;
    ASSERT_NO_THROW(got = Tuple::unpack(v.bytes)) << "vectors.txt:" << v.line;
    EXPECT_TRUE(tuple_test::identical(v.tuple, got)) << "vectors.txt:" << v.line;
  }
}

// unpack_first (the public call the recipes decode an item's position with) is
// unpack()[0] for every vector, and refuses the empty tuple.
TEST(TupleGolden, UnpackFirstIsTheFirstElementOfEveryVector) {
  const auto vectors = tuple_test::load_vectors();
  ASSERT_FALSE(vectors.empty());
  int checked = 0;
  for (const auto& v : vectors) {
    if (v.tuple.empty()) continue;
    Element first;
    ASSERT_NO_THROW(first = unpack_first(v.bytes)) << "vectors.txt:" << v.line;
    EXPECT_TRUE(tuple_test::identical(Tuple{v.tuple[0]}, Tuple{first})) << "vectors.txt:" << v.line;
    ++checked;
  }
  EXPECT_GT(checked, 400);
  EXPECT_THAT([] { (void)unpack_first("", 3); }, ThrowsCode(ErrorCode::invalid_tuple));
}

// The pieces a layer writes keys with (append_packed, pack_int_at, pack_bytes_at) give the
// bytes Tuple::pack gives for the same elements, at any place in a buffer.
TEST(TupleGolden, PackedPiecesAreTheTuplesBytes) {
  const std::string prefix("\x15\x07pre", 5);
  for (std::int64_t v : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{255},
                         std::int64_t{-256}, std::int64_t{1} << 40, INT64_MAX, INT64_MIN}) {
    for (const std::string& bytes :
         {std::string(), std::string("id"), std::string("\0\0x", 3), std::string(20, '\0')}) {
      std::string buffer(prefix.size() + kMaxPackedIntSize + max_packed_bytes_size(bytes.size()),
                         '?');
      char* out = std::copy(prefix.begin(), prefix.end(), buffer.data());
      out = pack_int_at(out, v);
      out = pack_bytes_at(out, bytes);
      buffer.resize(static_cast<std::size_t>(out - buffer.data()));
      EXPECT_EQ(buffer, prefix + (Tuple{v, Bytes{bytes}}).pack()) << v;

      std::string appended = prefix;
      append_packed(appended, Element(v));
      append_packed(appended, Element(Bytes{bytes}));
      EXPECT_EQ(appended, buffer) << v;
    }
  }
}

// Worked examples checked against FoundationDB's bindings/python/fdb/tuple.py, numbered, through
// the C++ literals.
TEST(TupleGolden, SemanticsTableExamples) {
  struct Case {
    int number;
    Tuple tuple;
    const char* hex;
  };
  Tuple nested_null{Element(Tuple{nullptr})};
  const Case cases[] = {
      {1, Tuple{}, ""},
      {2, Tuple{nullptr}, "00"},
      {3, Tuple{Bytes{}}, "01 00"},
      {4, Tuple{""}, "02 00"},
      {5, Tuple{Bytes{std::string("foo\0bar", 7)}}, "01 66 6F 6F 00 FF 62 61 72 00"},
      {9, Tuple{std::string("F\xc3\x94O\0bar", 8)}, "02 46 C3 94 4F 00 FF 62 61 72 00"},
      {12, Tuple{"\xf0\x9f\x94\xa5"}, "02 F0 9F 94 A5 00"},
      {16, Tuple{-1}, "13 FE"},
      {25, Tuple{-5551212}, "11 AB 4B 93"},
      {27, Tuple{std::numeric_limits<std::int64_t>::max()}, "1C 7F FF FF FF FF FF FF FF"},
      {28, Tuple{std::uint64_t{1} << 63}, "1C 80 00 00 00 00 00 00 00"},
      {30, Tuple{~std::uint64_t{0}}, "1C FF FF FF FF FF FF FF FF"},
      {31, Tuple{BigInt("18446744073709551616")}, "1D 09 01 00 00 00 00 00 00 00 00"},
      {33, Tuple{std::numeric_limits<std::int64_t>::min()}, "0C 7F FF FF FF FF FF FF FF"},
      {36, Tuple{BigInt("-18446744073709551615")}, "0C 00 00 00 00 00 00 00 00"},
      {37, Tuple{BigInt("-18446744073709551616")}, "0B F6 FE FF FF FF FF FF FF FF FF"},
      {41, Tuple{-42.0f}, "20 3D D7 FF FF"},
      {42, Tuple{3.14f}, "20 C0 48 F5 C3"},
      {44, Tuple{-0.0f}, "20 7F FF FF FF"},
      {46, Tuple{3.14}, "21 C0 09 1E B8 51 EB 85 1F"},
      {47, Tuple{-3.14}, "21 3F F6 E1 47 AE 14 7A E0"},
      {49, Tuple{-0.0}, "21 7F FF FF FF FF FF FF FF"},
      {52, Tuple{std::bit_cast<double>(std::uint64_t{0x7FF8000000000000})},
       "21 FF F8 00 00 00 00 00 00"},
      {53, Tuple{std::bit_cast<double>(std::uint64_t{0xFFF8000000000000})},
       "21 00 07 FF FF FF FF FF FF"},
      {54, Tuple{false, true}, "26 27"},
      {55,
       Tuple{Uuid{{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC,
                   0xDD, 0xEE, 0xFF}}},
       "30 00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF"},
      {56, Tuple{Versionstamp{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 657}},
       "33 01 02 03 04 05 06 07 08 09 0A 02 91"},
      {57, Tuple{Element(Tuple{})}, "05 00"},
      {58, nested_null, "05 00 FF 00"},
      {59, Tuple{Element(Tuple{Bytes{std::string("foo\0bar", 7)}, nullptr, Element(Tuple{})})},
       "05 01 66 6F 6F 00 FF 62 61 72 00 00 FF 05 00 00"},
      {60, Tuple{Element(Tuple{nullptr, "hello"})}, "05 00 FF 02 68 65 6C 6C 6F 00 00"},
      {61, Tuple{Element(Tuple{nullptr}), "hello"}, "05 00 FF 00 02 68 65 6C 6C 6F 00"},
      {62, Tuple{Element(nested_null)}, "05 05 00 FF 00 00"},
      {63, Tuple{"a", 1, nullptr, Bytes{"b"}}, "02 61 00 15 01 00 01 62 00"},
      {64, Tuple{1, "x", Element(Tuple{2, nullptr}), true, 1.5},
       "15 01 02 78 00 05 15 02 00 FF 00 27 21 BF F8 00 00 00 00 00 00"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(to_hex(c.tuple.pack()), to_hex(from_hex(c.hex))) << "example " << c.number;
    EXPECT_TRUE(tuple_test::identical(c.tuple, Tuple::unpack(from_hex(c.hex))))
        << "example " << c.number;
  }
}

// +-(2^64-1): strata emits the spec/Java/Go form and also reads FDB Python's big form.
TEST(TupleGolden, Plus_Minus_TwoTo64MinusOne_EmitSpecFormAndAcceptPythonForm) {
  const Tuple max_u64{~std::uint64_t{0}};
  const Tuple min_neg{BigInt("-18446744073709551615")};
  EXPECT_EQ(to_hex(max_u64.pack()), "1cffffffffffffffff");
  EXPECT_EQ(to_hex(min_neg.pack()), "0c0000000000000000");
  EXPECT_TRUE(tuple_test::identical(max_u64, Tuple::unpack(from_hex("1d08ffffffffffffffff"))));
  EXPECT_TRUE(tuple_test::identical(min_neg, Tuple::unpack(from_hex("0bf70000000000000000"))));
}

TEST(TupleGolden, PackWithVersionstampAppendsLittleEndianOffset) {
  // Example 65: ('a', incomplete(7)) -> offset 4.
  EXPECT_EQ(to_hex(Tuple{"a", Versionstamp::incomplete(7)}.pack_with_versionstamp()),
            "02610033ffffffffffffffffffff000704000000");
  // Example 67: the offset counts a prefix (here b'\x15\x01' as a raw prefix, and as the
  // tuple prefix (1,), which packs to the same bytes).
  const std::string expected_67 = "150133ffffffffffffffffffff000003000000";
  EXPECT_EQ(to_hex(Subspace(Tuple{}, from_hex("1501"))
                       .pack_with_versionstamp(Tuple{Versionstamp::incomplete()})),
            expected_67);
  EXPECT_EQ(to_hex(Subspace(Tuple{1}).pack_with_versionstamp(Tuple{Versionstamp::incomplete()})),
            expected_67);
  // Example 68: a stamp inside a nested tuple.
  EXPECT_EQ(to_hex(Tuple{Element(Tuple{1, Versionstamp::incomplete(3)})}.pack_with_versionstamp()),
            "05150133ffffffffffffffffffff00030004000000");
}

TEST(TupleGolden, PackWithVersionstampNeedsExactlyOneIncompleteStamp) {
  using ::testing::HasSubstr;
  const Versionstamp complete{{0, 0, 0, 0, 0, 0, 0, 1, 0, 0}, 0};
  EXPECT_THAT([] { (void)Tuple{"a"}.pack_with_versionstamp(); },
              strata::testing::ThrowsCodeWith(ErrorCode::invalid_argument, "found 0"));
  EXPECT_THAT([&] { (void)Tuple{complete}.pack_with_versionstamp(); },
              ThrowsCode(ErrorCode::invalid_argument));
  const Tuple two_stamps{Versionstamp::incomplete(), Element(Tuple{Versionstamp::incomplete(1)})};
  EXPECT_THAT([&] { (void)two_stamps.pack_with_versionstamp(); },
              strata::testing::ThrowsCodeWith(ErrorCode::invalid_argument, "found 2"));
  EXPECT_THAT([] { (void)Subspace(Tuple{"p"}).pack_with_versionstamp(Tuple{1}); },
              ThrowsCode(ErrorCode::invalid_argument));
}

TEST(TupleGolden, PlainPackRefusesIncompleteVersionstampEvenNested) {
  EXPECT_THAT([] { (void)Tuple{Versionstamp::incomplete()}.pack(); },
              ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT(
      [] {
        (void)Tuple{Element(Tuple{1, Versionstamp::incomplete()})}.pack();
      },
      ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT([] { (void)Subspace(Tuple{"q"}).pack(Tuple{Versionstamp::incomplete()}); },
              ThrowsCode(ErrorCode::invalid_argument));
}

TEST(TupleGolden, IncompleteVersionstampUnpacksAsIncomplete) {
  const Tuple t = Tuple::unpack(from_hex("33ffffffffffffffffffff0007"));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_FALSE(t[0].get<Versionstamp>().complete());
  EXPECT_EQ(t[0].get<Versionstamp>().user, 7);
}

TEST(TupleGolden, RangeExamples) {
  const KeyRange a = Subspace().range(Tuple{"a"});
  EXPECT_EQ(to_hex(a.begin), "02610000");
  EXPECT_EQ(to_hex(a.end), "026100ff");
  const KeyRange all = Subspace().range();
  EXPECT_EQ(to_hex(all.begin), "00");
  EXPECT_EQ(to_hex(all.end), "ff");
}

TEST(TupleGolden, UnicodeElementThatIsNotUtf8IsRefusedByPack) {
  EXPECT_THAT([] { (void)Tuple{std::string("\xff")}.pack(); },
              ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_EQ(to_hex(Tuple{Bytes{"\xff"}}.pack()), "01ff00");
}

}  // namespace
}  // namespace strata
