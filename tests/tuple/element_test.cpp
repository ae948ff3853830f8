// Element: which C++ value becomes which element type, is/get, and equality by bytes.
#include <bit>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/tuple.hpp"

#include "support/error_matchers.hpp"
#include "tuple_test_support.hpp"

namespace strata {
namespace {

using strata::testing::ThrowsCodeWith;
using tuple_test::to_hex;

TEST(Element, BoolStaysBoolAndNeverBecomesAnInteger) {
  const Element t = true;
  EXPECT_TRUE(t.is<bool>());
  EXPECT_FALSE(t.is<std::int64_t>());
  EXPECT_EQ(to_hex(Tuple{true, false}.pack()), "2726");
}

TEST(Element, StringLiteralIsUnicodeNotBool) {
  const Element e = "abc";
  EXPECT_TRUE(e.is<std::string>());
  EXPECT_FALSE(e.is<bool>());
  EXPECT_EQ(e.get<std::string>(), "abc");
  EXPECT_TRUE(Element(std::string("x")).is<std::string>());
  EXPECT_TRUE(Element(std::string_view("x")).is<std::string>());
  EXPECT_TRUE(Element(Bytes{"x"}).is<Bytes>());
}

TEST(Element, IntegerTypesMapToInt64OrUint64) {
  EXPECT_TRUE(Element(std::int8_t{-1}).is<std::int64_t>());
  EXPECT_TRUE(Element(short{2}).is<std::int64_t>());
  EXPECT_TRUE(Element(3).is<std::int64_t>());
  EXPECT_TRUE(Element(4L).is<std::int64_t>());
  EXPECT_TRUE(Element(5LL).is<std::int64_t>());
  EXPECT_TRUE(Element(std::uint8_t{6}).is<std::int64_t>());
  EXPECT_TRUE(Element(std::uint16_t{7}).is<std::int64_t>());
  EXPECT_TRUE(Element(8u).is<std::int64_t>());
  EXPECT_TRUE(Element(9UL).is<std::uint64_t>());
  EXPECT_TRUE(Element(10ULL).is<std::uint64_t>());
  EXPECT_TRUE(Element(std::size_t{11}).is<std::uint64_t>());
  EXPECT_TRUE(Element('Q').is<std::int64_t>());
  EXPECT_EQ(Element(4000000000u).get<std::int64_t>(), 4000000000);
}

TEST(Element, OtherConstructorsKeepTheirType) {
  EXPECT_TRUE(Element(nullptr).is<std::nullptr_t>());
  EXPECT_TRUE(Element().is<std::nullptr_t>());
  EXPECT_TRUE(Element(1.5f).is<float>());
  EXPECT_TRUE(Element(1.5).is<double>());
  EXPECT_TRUE(Element(BigInt("99999999999999999999")).is<BigInt>());
  EXPECT_TRUE(Element(Uuid{}).is<Uuid>());
  EXPECT_TRUE(Element(Versionstamp{}).is<Versionstamp>());
  EXPECT_TRUE(Element(Tuple{1, 2}).is<Tuple>());
  EXPECT_EQ(Element(Tuple{1, 2}).get<Tuple>().size(), 2u);
}

TEST(Element, GetOfTheWrongTypeThrowsInvalidArgumentNamingBothTypes) {
  EXPECT_THAT([] { (void)Element(1).get<std::string>(); },
              ThrowsCodeWith(ErrorCode::invalid_argument,
                             "Element::get<string>() on an element holding int64"));
  EXPECT_THAT([] { (void)Element("x").get<Tuple>(); },
              ThrowsCodeWith(ErrorCode::invalid_argument, "get<tuple>"));
  EXPECT_THAT([] { (void)Element(std::uint64_t{1}).get<std::int64_t>(); },
              ThrowsCodeWith(ErrorCode::invalid_argument, "holding uint64"));
  EXPECT_THAT([] { (void)Element(static_cast<const char*>(nullptr)); },
              strata::testing::ThrowsCode(ErrorCode::invalid_argument));
}

TEST(Element, BracedTupleOfOneTupleCopiesAndElementNests) {
  const Tuple inner{1, 2};
  const Tuple copied{inner};
  const Tuple nested{Element(inner)};
  EXPECT_EQ(copied.size(), 2u);
  ASSERT_EQ(nested.size(), 1u);
  EXPECT_EQ(nested[0].get<Tuple>(), inner);
  Tuple appended;
  appended.append(inner);
  EXPECT_EQ(appended, nested);
  const Tuple two{inner, inner};  // two or more tuples nest
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].get<Tuple>(), inner);
  const Tuple mixed{inner, 3};
  ASSERT_EQ(mixed.size(), 2u);
  EXPECT_EQ(mixed[0].get<Tuple>(), inner);
}

TEST(Element, NestedTupleIsSharedByCopiesAndOutlivesTheOriginal) {
  Element copy = nullptr;
  {
    const Element original(Tuple{"x", 1});
    copy = original;
    EXPECT_EQ(&copy.get<Tuple>(), &original.get<Tuple>());
  }
  EXPECT_EQ(copy.get<Tuple>(), (Tuple{"x", 1}));
}

TEST(Element, FloatsCompareByExactBits) {
  EXPECT_NE(Element(0.0), Element(-0.0));
  EXPECT_NE(Element(0.0f), Element(-0.0f));
  const double nan = std::bit_cast<double>(std::uint64_t{0x7ff8000000000000});
  const double nan2 = std::bit_cast<double>(std::uint64_t{0x7ff8000000000001});
  EXPECT_EQ(Element(nan), Element(nan));
  EXPECT_NE(Element(nan), Element(nan2));
  EXPECT_NE(Element(1.0f), Element(1.0));  // float and double are different types
}

// Equality follows the packed bytes, so integers compare by value across C++ types.
TEST(Element, IntegersEqualByValueAcrossStoredTypesBecauseBytesAreEqual) {
  const Element as_int = std::int64_t{5};
  const Element as_uint = std::uint64_t{5};
  const Element as_big = BigInt("5");
  EXPECT_EQ(as_int, as_uint);
  EXPECT_EQ(as_int, as_big);
  EXPECT_EQ(Tuple{as_int}.pack(), Tuple{as_uint}.pack());
  EXPECT_EQ(Tuple{as_int}.pack(), Tuple{as_big}.pack());
  EXPECT_EQ(Element(~std::uint64_t{0}), Element(BigInt("18446744073709551615")));
  EXPECT_NE(Element(-1), Element(~std::uint64_t{0}));
  EXPECT_TRUE(Tuple::unpack(Tuple{as_uint}.pack())[0].is<std::int64_t>());
}

TEST(Element, DifferentTypesAreUnequal) {
  EXPECT_NE(Element(Bytes{"a"}), Element("a"));
  EXPECT_NE(Element(0), Element(false));
  EXPECT_NE(Element(nullptr), Element(Tuple{}));
  EXPECT_NE(Element(Tuple{}), Element(Tuple{nullptr}));
}

// Thread safety contract: concurrent const use, including copies that share one nested
// tuple (the shared_ptr count is the only shared mutable state). Run under TSan in CI.
TEST(Element, ConcurrentCopiesOfSharedNestedTuplesAreSafe) {
  const Tuple shared{"root", Element(Tuple{1, Element(Tuple{Bytes{"x"}, nullptr}), 2.5})};
  const std::string expected = shared.pack();
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < 2000; ++n) {
        Tuple copy = shared;
        copy.append(n);
        const Element inner = shared[1];
        if (inner.get<Tuple>()[1].get<Tuple>().size() != 2) ++mismatches[i];
        if (!(shared < copy) || copy.pack().compare(0, expected.size(), expected) != 0) {
          ++mismatches[i];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

TEST(Versionstamp, DefaultIsIncompleteAndCompleteWhenAnyByteIsNotFF) {
  EXPECT_FALSE(Versionstamp{}.complete());
  EXPECT_EQ(Versionstamp{}.user, 0);
  const Versionstamp v = Versionstamp::incomplete(7);
  EXPECT_FALSE(v.complete());
  EXPECT_EQ(v.user, 7);
  Versionstamp c;
  c.tr[9] = 0xfe;
  EXPECT_TRUE(c.complete());
}

}  // namespace
}  // namespace strata
