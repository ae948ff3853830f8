// Subspace and strinc: the byte examples of FoundationDB's bindings/python/fdb/subspace_impl.py,
// and membership rules.
#include "strata/subspace.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/tuple.hpp"

#include "support/error_matchers.hpp"
#include "tuple_test_support.hpp"

namespace strata {
namespace {

using strata::testing::ThrowsCode;
using strata::testing::ThrowsCodeWith;
using tuple_test::from_hex;
using tuple_test::to_hex;

const Subspace q(Tuple{"Q"});

TEST(Subspace, KeyIsThePackedPrefix) {
  EXPECT_EQ(to_hex(q.key()), "025100");
  EXPECT_EQ(to_hex(Subspace(Tuple{"a"}, from_hex("0102")).key()), "0102026100");
  EXPECT_EQ(to_hex(Subspace(Tuple{}, "\xfe").key()), "fe");
  EXPECT_EQ(Subspace().key(), "");
}

TEST(Subspace, PackPrependsThePrefix) {
  EXPECT_EQ(to_hex(q.pack(Tuple{1, Bytes{"x"}})),
            "02510015010178"
            "00");
  EXPECT_EQ(q.pack(), q.key());
}

TEST(Subspace, RangeCoversStrictExtensionsOnly) {
  const KeyRange all = q.range();
  EXPECT_EQ(to_hex(all.begin), "02510000");
  EXPECT_EQ(to_hex(all.end), "025100ff");
  const KeyRange five = q.range(Tuple{5});
  EXPECT_EQ(to_hex(five.begin), "025100150500");
  EXPECT_EQ(to_hex(five.end), "0251001505ff");
  // contains() is wider than range(): the bare prefix is contained but outside the range.
  EXPECT_TRUE(q.contains(q.key()));
  EXPECT_LT(q.key(), all.begin);
}

TEST(Subspace, ChildSubspaces) {
  EXPECT_EQ(to_hex(q["item"].key()), "025100026974656d00");
  EXPECT_EQ(q["item"].key(), q.subspace(Tuple{"item"}).key());
  EXPECT_EQ(q[1]["x"].key(), q.subspace(Tuple{1, "x"}).key());
  EXPECT_EQ(q[1].pack(Tuple{2}), q.pack(Tuple{1, 2}));
}

TEST(Subspace, UnpackStripsThePrefix) {
  const Tuple t{7, Bytes{std::string(20, '\x00')}};
  EXPECT_EQ(q.unpack(q.pack(t)), t);
  EXPECT_EQ(q.unpack(q.key()), Tuple{});
  const Subspace raw(Tuple{}, from_hex("1501"));
  EXPECT_EQ(raw.unpack(from_hex("1501 1502")), Tuple{2});
}

TEST(Subspace, UnpackOutsideThrowsKeyNotInSubspace) {
  EXPECT_THAT([] { (void)q.unpack(from_hex("025200")); },
              ThrowsCodeWith(ErrorCode::key_not_in_subspace,
                             "key 02 52 00 does not start with the subspace prefix 02 51 00"));
  EXPECT_THAT([] { (void)q.unpack(from_hex("0251")); }, ThrowsCode(ErrorCode::key_not_in_subspace));
  EXPECT_THAT([] { (void)q.unpack(""); }, ThrowsCode(ErrorCode::key_not_in_subspace));
}

TEST(Subspace, ContainsIsAPlainPrefixTest) {
  EXPECT_TRUE(q.contains(from_hex("025100ff")));  // not a valid tuple, still contained
  EXPECT_TRUE(q.contains(q.pack(Tuple{1})));
  EXPECT_FALSE(q.contains(from_hex("0251")));
  EXPECT_FALSE(q.contains(from_hex("025200")));
  EXPECT_TRUE(Subspace().contains(""));
}

TEST(Subspace, PrefixWithIncompleteVersionstampIsRefused) {
  EXPECT_THAT([] { Subspace s(Tuple{Versionstamp::incomplete()}); },
              ThrowsCode(ErrorCode::invalid_argument));
}

TEST(Strinc, DropsTrailingFFAndIncrementsTheLastByte) {
  EXPECT_EQ(strinc("a"), "b");
  EXPECT_EQ(strinc("a\xff\xff"), "b");
  EXPECT_EQ(to_hex(strinc(from_hex("01fe"))), "01ff");
  EXPECT_EQ(to_hex(strinc(from_hex("00ff"))), "01");
  EXPECT_EQ(to_hex(strinc(q.key())), "025101");
}

TEST(Strinc, EmptyOrAllFFThrowsInvalidArgument) {
  EXPECT_THAT([] { (void)strinc(""); }, ThrowsCode(ErrorCode::invalid_argument));
  EXPECT_THAT([] { (void)strinc("\xff\xff"); }, ThrowsCode(ErrorCode::invalid_argument));
}

}  // namespace
}  // namespace strata
